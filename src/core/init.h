#ifndef FERRY_INIT_H
#define FERRY_INIT_H
int ferry_init(int required, int *provided);
int ferry_finalize(void);
int ferry_is_main_thread(void);
#endif
