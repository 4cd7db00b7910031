#!/usr/bin/env python3
"""Check Ferry's mpi.h against MPICH's for binary compatibility.

usage: abi_check.py [--cc CC] [--ferry-include DIR] [--mpich-include DIR] CHECK...

CHECK is one or both of:

  constants   Every MPI_ constant and predefined handle of Ferry's header has
              MPICH's value (a C program prints them all, built once against
              each header); macros that stand for a library symbol
              (MPI_COMM_DUP_FN -> MPIR_Dup_fn) reference the same symbol; the
              exported variables exist under the same names and sizes; the
              scalar types, handle types and MPI_Status have the same sizes,
              signedness, C type and field offsets.  MPICH constants that
              Ferry lacks fail too, except the MPI-4 / MPICH-only ones below.

  prototypes  Every MPI-3.1 function and every MPI-4 large-count (_c) function
              MPICH declares is declared by Ferry, with the same parameter and
              return types; so is every other later one (MPI-4) that Ferry
              declares.

  exports     Every function and variable named MPI_, PMPI_, MPIX_, PMPIX_ or
              QMPI_ that MPICH's libmpich.so.12 exports is exported by Ferry's
              libmpi.so.12 (--ferry-lib, --mpich-lib), so that no binary built
              with MPICH's mpicc fails to load on Ferry for want of a symbol.

Fails (exit 1) when MPICH's header is not found: CI installs libmpich-dev.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# --- names that may legitimately differ ------------------------------------

# Same name, different value on purpose.
EXPECTED_VALUE_DIFFERENCES = {'MPI_VERSION', 'MPI_SUBVERSION'}

# MPICH constants Ferry does not define: MPI-4 additions and MPICH internals.
MPICH_ONLY_CONSTANTS = {
    'MPI_SESSION_NULL', 'MPI_COMM_TYPE_HW_GUIDED', 'MPI_COMM_TYPE_HW_UNGUIDED',
    'MPI_MAX_PSET_NAME_LEN', 'MPI_MAX_STRINGTAG_LEN',
    'MPI_T_CB_REQUIRE_NONE', 'MPI_T_CB_REQUIRE_MPI_RESTRICTED',
    'MPI_T_CB_REQUIRE_THREAD_SAFE', 'MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE',
    'MPI_T_SOURCE_ORDERED', 'MPI_T_SOURCE_UNORDERED',
    # include guards and configuration macros of MPICH's headers
    'MPI_INCLUDED', 'MPI_PROTO_H_INCLUDED', 'MPI_FILE_DEFINED', 'MPI_OFFSET_TYPEDEF',
    'MPI_AINT_FMT_DEC_SPEC', 'MPI_AINT_FMT_HEX_SPEC',
}

# MPICH functions that are not part of MPI-3.1.
def not_mpi31(name):
    return bool(
        name.endswith('_c')                                   # MPI-4 large counts
        or re.match(r'MPI_(Session|T_event|T_source|Pready|Parrived)', name)
        or re.match(r'MPI_\w+_init$', name) and name not in (
            'MPI_Send_init', 'MPI_Bsend_init', 'MPI_Ssend_init', 'MPI_Rsend_init',
            'MPI_Recv_init')                                  # persistent collectives
        or name in {
            'MPI_Info_create_env', 'MPI_Info_get_string', 'MPI_Comm_create_from_group',
            'MPI_Group_from_session_pset', 'MPI_Intercomm_create_from_groups',
            'MPI_Psend_init', 'MPI_Precv_init', 'MPI_Isendrecv', 'MPI_Isendrecv_replace',
            'MPI_Comm_idup_with_info', 'MPI_Type_get_value_index', 'MPI_Register_datarep_c',
            'MPI_T_category_get_num_events', 'MPI_T_category_get_events',
            'MPI_Status_f082c', 'MPI_Status_c2f08', 'MPI_Status_f082f', 'MPI_Status_f2f08',
            'MPI_Status_get_source', 'MPI_Status_get_tag', 'MPI_Status_get_error',
            'MPI_Status_set_source', 'MPI_Status_set_tag', 'MPI_Status_set_error',
            'MPI_Comm_get_errhandler_c', 'MPI_Session_create_errhandler',
        })

# Parameter types that are equivalent although spelled differently.
TYPE_ALIASES = {'MPI_Handler_function *': 'MPI_Comm_errhandler_function *',
                'MPIO_Request *': 'MPI_Request *'}

# --- helpers ---------------------------------------------------------------

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def compile_and_run(cc, inc, src, tmp, tag):
    c = os.path.join(tmp, tag + '.c')
    exe = os.path.join(tmp, tag)
    with open(c, 'w') as f:
        f.write(src)
    r = run([cc, '-std=gnu11', '-w', '-I' + inc, c, '-o', exe])
    if r.returncode:
        sys.exit('abi_check: compiling against %s failed:\n%s' % (inc, r.stderr[-4000:]))
    r = run([exe])
    if r.returncode:
        sys.exit('abi_check: running %s failed:\n%s' % (exe, r.stderr))
    out = {}
    for line in r.stdout.splitlines():
        key, _, val = line.partition(' ')
        out[key] = val
    return out


def macros(cc, inc):
    """Object-like MPI_ macros visible after #include <mpi.h>."""
    r = run([cc, '-E', '-dM', '-I' + inc, '-x', 'c', '-'], input='#include <mpi.h>\n')
    if r.returncode:
        sys.exit('abi_check: preprocessing %s/mpi.h failed:\n%s' % (inc, r.stderr))
    return {m.group(1) for m in re.finditer(r'^#define (MPI_\w+)(?=[ \t]|$)', r.stdout, re.M)}


def header_text(cc, inc):
    """mpi.h as the compiler sees it: preprocessed, so that only the
    declarations that are actually active count."""
    r = run([cc, '-E', '-P', '-I' + inc, '-x', 'c', '-'], input='#include <mpi.h>\n')
    if r.returncode:
        sys.exit('abi_check: preprocessing %s/mpi.h failed:\n%s' % (inc, r.stderr))
    return r.stdout


def enumerators(text):
    names = set()
    for tag, body in re.findall(r'\benum\b([^{;]*)\{([^}]*)\}', text):
        if 'QMPI' in tag:       # MPICH's tool-stacking interface, not MPI
            continue
        for item in body.split(','):
            m = re.match(r'\s*(MPI_\w+)', item)
            if m:
                names.add(m.group(1))
    return names


def extern_vars(text):
    """Names of exported MPI_ variables declared with extern."""
    text = re.sub(r'extern\s*"C"', ' ', text)
    text = re.sub(r'\b(MPICH_API_PUBLIC|ROMIO_API_PUBLIC|MPIU_DLL_SPEC)\b', ' ', text)
    out = set()
    for decl in re.findall(r'\bextern\b([^;(){}]*);', text):
        m = re.search(r'\b(\w+)\s*(?:\[[^\]]*\])?\s*$', decl)
        if m and m.group(1).startswith('MPI_'):
            out.add(m.group(1))
    return out


# --- constants -------------------------------------------------------------

def check_constants(args, tmp):
    ftext, mtext = header_text(args.cc, args.ferry_include), header_text(args.cc, args.mpich_include)
    fnames = macros(args.cc, args.ferry_include) | enumerators(ftext)
    mnames = macros(args.cc, args.mpich_include) | enumerators(mtext)

    missing_in_mpich = sorted(fnames - mnames)
    for n in missing_in_mpich:
        fail('%s is defined by Ferry but not by MPICH' % n)
    for n in sorted(mnames - fnames - MPICH_ONLY_CONSTANTS):
        fail('%s is defined by MPICH but not by Ferry' % n)
    names = sorted(fnames & mnames)

    # Pass 1: which names are compile-time constants (does not reference symbols).
    src = '#include <mpi.h>\n#include <stdio.h>\n#include <stdint.h>\nint main(void)\n{\n'
    for n in names:
        src += '    printf("%s %%d\\n", __builtin_constant_p((long long)(intptr_t)(%s)));\n' % (n, n)
    src += '    return 0;\n}\n'
    fconst = compile_and_run(args.cc, args.ferry_include, src, tmp, 'const_ferry')
    mconst = compile_and_run(args.cc, args.mpich_include, src, tmp, 'const_mpich')
    consts = [n for n in names if fconst[n] == '1' and mconst[n] == '1']
    symbolic = [n for n in names if n not in consts]

    # Pass 2: values of the constants.
    src = '#include <mpi.h>\n#include <stdio.h>\n#include <stdint.h>\nint main(void)\n{\n'
    for n in consts:
        src += '    printf("%s %%lld\\n", (long long)(intptr_t)(%s));\n' % (n, n)
    src += '    return 0;\n}\n'
    fval = compile_and_run(args.cc, args.ferry_include, src, tmp, 'val_ferry')
    mval = compile_and_run(args.cc, args.mpich_include, src, tmp, 'val_mpich')
    for n in consts:
        if fval[n] != mval[n]:
            if n in EXPECTED_VALUE_DIFFERENCES:
                print('note: %s differs as intended (Ferry %s, MPICH %s)' % (n, fval[n], mval[n]))
            else:
                fail('%s: Ferry %s, MPICH %s' % (n, fval[n], mval[n]))

    # Macros that expand to a library symbol must name the same symbol.
    for n in symbolic:
        fs, ms = (undefined_symbols(args.cc, inc, n, tmp)
                  for inc in (args.ferry_include, args.mpich_include))
        if fs != ms:
            fail('%s references %s in Ferry but %s in MPICH' % (n, sorted(fs), sorted(ms)))

    # Exported variables.
    fvars, mvars = extern_vars(ftext), extern_vars(mtext)
    for n in sorted(mvars - fvars):
        fail('MPICH exports variable %s, Ferry does not declare it' % n)
    for n in sorted(fvars - mvars):
        fail('Ferry declares variable %s, MPICH does not' % n)

    # Type sizes, layouts and identities.
    probes = ['sizeof(%s)' % v for v in sorted(fvars & mvars)]
    for t in ('MPI_Aint', 'MPI_Offset', 'MPI_Count', 'MPI_Fint'):
        probes += ['sizeof(%s)' % t, '((%s)-1 < 0)' % t, 'TYPENAME((%s)0)' % t]
    for t in ('MPI_Comm', 'MPI_Group', 'MPI_Datatype', 'MPI_Op', 'MPI_Errhandler',
              'MPI_Request', 'MPI_Message', 'MPI_Info', 'MPI_Win', 'MPI_File',
              'MPI_T_enum', 'MPI_T_cvar_handle', 'MPI_T_pvar_handle', 'MPI_T_pvar_session'):
        probes += ['sizeof(%s)' % t, 'TYPENAME((%s)0)' % t]
    for s in ('MPI_Status', 'MPI_F08_status'):
        probes.append('sizeof(%s)' % s)
        for fld in ('count_lo', 'count_hi_and_cancelled', 'MPI_SOURCE', 'MPI_TAG', 'MPI_ERROR'):
            probes.append('offsetof(%s,%s)' % (s, fld))
    src = ('#include <mpi.h>\n#include <stdio.h>\n#include <stddef.h>\n'
           '#define TYPENAME(x) _Generic((x), int: 1, long: 2, long long: 3, '
           'default: (sizeof(x) == sizeof(void *) ? 4 : 0))\n'
           'int main(void)\n{\n')
    for p in probes:
        key = re.sub(r'\s+', '', p)
        src += '    printf("%s %%lld\\n", (long long)(%s));\n' % (key, p)
    src += '    return 0;\n}\n'
    fl = compile_and_run(args.cc, args.ferry_include, src, tmp, 'layout_ferry')
    ml = compile_and_run(args.cc, args.mpich_include, src, tmp, 'layout_mpich')
    for k in fl:
        if fl[k] != ml[k]:
            fail('%s: Ferry %s, MPICH %s' % (k, fl[k], ml[k]))

    print('constants: %d values, %d symbol macros (%s), %d variables, %d layout probes compared'
          % (len(consts), len(symbolic), ', '.join(symbolic), len(fvars & mvars), len(fl)))


def undefined_symbols(cc, inc, name, tmp):
    c = os.path.join(tmp, 'sym.c')
    o = os.path.join(tmp, 'sym.o')
    with open(c, 'w') as f:
        f.write('#include <mpi.h>\n#include <stdint.h>\n'
                'intptr_t probe(void) { return (intptr_t)(%s); }\n' % name)
    r = run([cc, '-c', '-w', '-I' + inc, c, '-o', o])
    if r.returncode:
        sys.exit('abi_check: probing %s failed:\n%s' % (name, r.stderr))
    r = run(['nm', '-u', o])
    syms = {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    return {x for x in syms if not x.startswith('_')}   # drop _GLOBAL_OFFSET_TABLE_


# --- prototypes ------------------------------------------------------------

def prototypes(text):
    """Function declarations (and MPIR_Dup_fn, the target of MPI_DUP_FN)."""
    out = {}
    for m in re.finditer(r'(?:^|(?<=[;}]))\s*([A-Za-z_][\w \t\*]*?)\b(MPI_\w+|MPIR_Dup_fn)\s*'
                         r'\(([^()]*)\)\s*;', text):
        ret, name, params = m.groups()
        if 'typedef' in ret.split():
            continue
        out[name] = (norm_type(ret), tuple(norm_param(p) for p in params.split(',')))
    return out


def norm_type(s):
    s = ' '.join(s.replace('*', ' * ').split()).replace('* *', '**')
    return TYPE_ALIASES.get(s, s)


def norm_param(p):
    """Type of one parameter, with the name dropped and arrays as pointers."""
    dims = re.findall(r'\[\s*(\w*)\s*\]', p)
    p = re.sub(r'\[[^\]]*\]', ' ', p)
    toks = re.findall(r'\.\.\.|\*|\w+', p)
    if len(toks) > 1 and re.match(r'\w+$', toks[-1]) and toks[-1] not in (
            'int', 'char', 'void', 'double', 'long', 'short', 'unsigned'):
        toks.pop()
    s = ' '.join(toks)
    if dims:
        s += ' *' + ''.join('[%s]' % d for d in dims[1:])
    return norm_type(s)


def check_prototypes(args, tmp):
    ferry = prototypes(header_text(args.cc, args.ferry_include))
    mpich = prototypes(header_text(args.cc, args.mpich_include))
    wanted = sorted(n for n in mpich if not not_mpi31(n) or n.endswith('_c'))
    if len(wanted) < 300:
        sys.exit('abi_check: found only %d MPICH prototypes; parser out of date?' % len(wanted))
    checked = 0
    for n in wanted:
        if n not in ferry:
            fail('%s function %s (declared by MPICH) is missing from Ferry'
                 % ('MPI-4 large-count' if n.endswith('_c') else 'MPI-3.1', n))
            continue
        checked += 1
        if ferry[n] != mpich[n]:
            fail('%s: Ferry %s%s, MPICH %s%s' % (n, ferry[n][0], list(ferry[n][1]),
                                                mpich[n][0], list(mpich[n][1])))
    # MPI-4 functions Ferry already declares must match MPICH's too
    for n in sorted(n for n in mpich if not_mpi31(n) and n in ferry):
        checked += 1
        if ferry[n] != mpich[n]:
            fail('%s: Ferry %s%s, MPICH %s%s' % (n, ferry[n][0], list(ferry[n][1]),
                                                mpich[n][0], list(mpich[n][1])))
    extra = sorted(n for n in ferry if n not in mpich)
    print('prototypes: %d MPICH functions checked (MPI-3.1 and the MPI-4 ones Ferry declares); Ferry declares %d MPI_ functions; '
          'not in MPICH\'s header (MPICH uses macros or lacks them): %s'
          % (checked, len(ferry), ', '.join(extra) or 'none'))


# --- exported symbols --------------------------------------------------------

def exported(lib):
    r = run(['nm', '-D', '--defined-only', lib])
    if r.returncode:
        sys.exit('abi_check: nm -D %s failed:\n%s' % (lib, r.stderr))
    out = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TWDBRVi' and re.match(r'(P?MPIX?|QMPI)_', f[2]):
            out.add(f[2].split('@')[0])
    return out


def check_exports(args):
    for lib in (args.ferry_lib, args.mpich_lib):
        if not lib or not os.path.exists(lib):
            sys.exit('abi_check: library %s not found (--ferry-lib, --mpich-lib)' % lib)
    ferry, mpich = exported(args.ferry_lib), exported(args.mpich_lib)
    if len(mpich) < 1000:
        sys.exit('abi_check: found only %d MPICH exports; nm output not understood?' % len(mpich))
    for n in sorted(mpich - ferry):
        fail('%s is exported by MPICH\'s library and not by Ferry\'s' % n)
    print('exports: %d MPICH symbols checked, %d exported by Ferry too' % (len(mpich), len(mpich & ferry)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--cc', default=os.environ.get('CC', 'cc'))
    ap.add_argument('--ferry-include', default=os.path.join(here, '..', '..', 'include'))
    ap.add_argument('--mpich-include', default='/usr/include/x86_64-linux-gnu/mpich')
    ap.add_argument('--ferry-lib', help="Ferry's libmpi.so.12 (exports)")
    ap.add_argument('--mpich-lib', default='/usr/lib/x86_64-linux-gnu/libmpich.so.12',
                    help="MPICH's libmpich.so.12 (exports)")
    ap.add_argument('checks', nargs='+', choices=['constants', 'prototypes', 'exports'])
    args = ap.parse_args()

    for inc in (args.ferry_include, args.mpich_include):
        if not os.path.exists(os.path.join(inc, 'mpi.h')):
            print('FAIL: %s/mpi.h not found (install libmpich-dev or pass --mpich-include)' % inc)
            sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        if 'constants' in args.checks:
            check_constants(args, tmp)
        if 'prototypes' in args.checks:
            check_prototypes(args, tmp)
        if 'exports' in args.checks:
            check_exports(args)
    if failures:
        print('%d failure(s)' % len(failures))
        sys.exit(1)
    print('OK')


if __name__ == '__main__':
    main()
