/**
 * The operating system's boundary around the Python rendering process (docs/expansion.md,
 * "Isolation"), entered by the runner (runner-source.ts) before it reads any request, so before
 * any template code runs. The audit guard in the runner is the inner layer; a template that
 * switches it off (it lives in the template's own process) meets this one.
 *
 * Linux only, through ctypes (Python 3.11 has no os.unshare), in this order:
 * 1. new user, mount, network, IPC and UTS namespaces, the process's own uid and gid mapped to
 *    themselves (the sandbox starts the process as an unprivileged uid when dm runs as root);
 * 2. a new root: a small tmpfs holding, read-only, only the directories of Python's library
 *    (sys.path) and of the shared libraries the interpreter has loaded (its extension modules
 *    need them), entered with pivot_root; the old root is detached;
 * 3. no_new_privs, then Landlock where the kernel has it: reading and executing only below those
 *    directories, no writes anywhere, no TCP bind or connect (ABI 4), no abstract Unix sockets or
 *    signals outside the process (ABI 6);
 * 4. every capability dropped; a seccomp filter refusing sockets, ptrace, other processes'
 *    memory, mounts, namespaces and the kernel's riskier interfaces (bpf, io_uring, keys,
 *    modules); the process made non-dumpable.
 * Where namespaces are refused (containers often forbid them) steps 3 and 4 still run, on the
 * real root. The result is printed in the ready line as `boundary` (the layers entered) and
 * `refused` (why namespaces were not); a failure of any later step is reported as no layer
 * entered, `refused` saying what failed (a registry's template is then refused).
 *
 * Defines `_enter_boundary()`, which returns (layers, refused); it leaves no ctypes module behind.
 */
export const PYTHON_BOUNDARY_SOURCE = `
# Syscalls a template never needs and an escape would: sockets of any family, other processes'
# memory, the kernel's attack surface (bpf, io_uring, keys, modules), and mounts and namespaces.
_DENIED_SYSCALLS = {
    # socket ptrace process_vm_readv/writev bpf perf_event_open keyctl add_key request_key
    # userfaultfd io_uring_setup mount umount2 pivot_root chroot unshare setns name_to_handle_at
    # open_by_handle_at kexec_load init_module finit_module open_tree move_mount fsopen fsmount
    # mount_setattr
    'x86_64': (0xc000003e, (41, 101, 310, 311, 321, 298, 250, 248, 249, 323, 425, 165, 166, 155, 161,
                            272, 308, 303, 304, 246, 175, 313, 428, 429, 430, 432, 442)),
    'aarch64': (0xc00000b7, (198, 117, 270, 271, 280, 241, 219, 217, 218, 282, 425, 40, 39, 41, 51,
                             97, 268, 264, 265, 104, 105, 273, 428, 429, 430, 432, 442)),
}

def _seccomp(ctypes, libc, machine):
    # A classic BPF filter: another architecture's calling convention kills the process, x32
    # calls and the syscalls above fail with EPERM, everything else is allowed.
    arch, denied = _DENIED_SYSCALLS[machine]
    prog = [(0x20, 0, 0, 4), (0x15, 1, 0, arch), (0x06, 0, 0, 0x80000000), (0x20, 0, 0, 0)]
    errno_at = len(prog) + (1 if machine == 'x86_64' else 0) + len(denied) + 1
    if machine == 'x86_64':
        prog.append((0x35, errno_at - len(prog) - 1, 0, 0x40000000))  # jge: x32
    for n in denied:
        prog.append((0x15, errno_at - len(prog) - 1, 0, n))
    prog.append((0x06, 0, 0, 0x7fff0000))  # allow
    prog.append((0x06, 0, 0, 0x00050000 | 1))  # errno EPERM

    class Insn(ctypes.Structure):
        _fields_ = [('code', ctypes.c_uint16), ('jt', ctypes.c_uint8), ('jf', ctypes.c_uint8), ('k', ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [('len', ctypes.c_uint16), ('filter', ctypes.POINTER(Insn))]

    insns = (Insn * len(prog))(*[Insn(*i) for i in prog])
    if libc.prctl(22, 2, ctypes.byref(Prog(len(prog), insns)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        raise OSError(ctypes.get_errno(), 'seccomp')

def _enter_boundary():
    import os as _bos, sys as _bsys
    layers = []
    refused = None
    if _bsys.platform != 'linux':
        return layers, 'not Linux'
    try:
        import ctypes
    except ImportError:
        return layers, 'no ctypes'
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        machine = _bos.uname().machine
        nr = {'x86_64': (155, 126), 'aarch64': (41, 91)}.get(machine)
        c_ulong, c_char_p, c_void_p, c_int = ctypes.c_ulong, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int
        libc.mount.argtypes = (c_char_p, c_char_p, c_char_p, c_ulong, c_void_p)
        libc.syscall.restype = ctypes.c_long

        def fail(what):
            e = ctypes.get_errno()
            raise OSError(e, '%s: %s' % (what, _bos.strerror(e)))

        def mount(src, target, fstype, flags, data=None):
            if libc.mount(src, target, fstype, flags, data) != 0:
                fail('mount %s' % target.decode())

        # What the new root holds: Python's library and the shared libraries' directories.
        keep = set()
        for p in _bsys.path:
            if p and _bos.path.isdir(p):
                keep.add(_bos.path.realpath(p))
        with open('/proc/self/maps') as maps:
            for line in maps:
                f = line.split(None, 5)
                if len(f) == 6 and f[5].startswith('/') and '.so' in f[5]:
                    keep.add(_bos.path.dirname(_bos.path.realpath(f[5].strip())))
        dirs = []
        for d in sorted(keep):
            if d != '/' and not any(d.startswith(k + '/') for k in dirs):
                dirs.append(d)

        MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
            1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
        if nr is None:
            refused = 'namespaces not supported on %s' % machine
        else:
            try:
                uid, gid = _bos.getuid(), _bos.getgid()
                # CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
                if libc.unshare(0x10000000 | 0x00020000 | 0x40000000 | 0x08000000 | 0x04000000) != 0:
                    refused = 'namespaces refused (%s)' % _bos.strerror(ctypes.get_errno())
                else:
                    for name, text in (('setgroups', 'deny'), ('uid_map', '%d %d 1' % (uid, uid)),
                                       ('gid_map', '%d %d 1' % (gid, gid))):
                        with open('/proc/self/' + name, 'w') as f:
                            f.write(text)
                    mount(None, b'/', None, MS_REC | MS_PRIVATE)
                    root = next((d for d in ('/tmp', '/mnt', '/var/tmp', '/run') if _bos.path.isdir(d)
                                 and not any(d == k or d.startswith(k + '/') for k in dirs)), None)
                    if root is None:
                        raise OSError(0, 'no directory to build the new root on')
                    mount(b'tmpfs', root.encode(), b'tmpfs', MS_NOSUID | MS_NODEV, b'size=64k,nr_inodes=256,mode=755')
                    for d in dirs:
                        target = (root + d).encode()
                        _bos.makedirs(target, exist_ok=True)
                        mount(d.encode(), target, None, MS_BIND | MS_REC)
                        # A bind mount keeps the flags its source's mount locks in a user namespace.
                        f = _bos.statvfs(d).f_flag
                        locked = (f & (MS_NOEXEC | 1024 | 2048)) | ((1 << 21) if f & 4096 else 0)  # noatime, relatime
                        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | locked)
                    _bos.chdir(root)
                    if libc.syscall(nr[0], b'.', b'.') != 0:
                        fail('pivot_root')
                    if libc.umount2(b'.', 2) != 0:  # MNT_DETACH
                        fail('detaching the old root')
                    _bos.chdir('/')
                    mount(None, b'/', None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
                    layers.append('namespaces')
            except OSError as e:
                refused = 'namespaces: %s' % (e.strerror or e)

        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            fail('no_new_privs')
        abi = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
        if abi >= 1:
            fs = (1 << 13) - 1
            if abi >= 2:
                fs |= 1 << 13  # REFER
            if abi >= 3:
                fs |= 1 << 14  # TRUNCATE
            if abi >= 5:
                fs |= 1 << 15  # IOCTL_DEV
            attr = [fs, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0]
            size = 8 if abi < 4 else 16 if abi < 6 else 24
            buf = (ctypes.c_uint64 * 3)(*attr)
            ruleset = libc.syscall(444, ctypes.byref(buf), size, 0)
            if ruleset < 0:
                fail('landlock_create_ruleset')
            try:
                allowed = 1 | 4 | 8  # EXECUTE | READ_FILE | READ_DIR
                for d in dirs:
                    fd = _bos.open(d, 0o10000000 | 0o2000000)  # O_PATH | O_CLOEXEC
                    try:
                        rule = ctypes.create_string_buffer(
                            allowed.to_bytes(8, 'little') + fd.to_bytes(4, 'little', signed=True), 12)
                        if libc.syscall(445, ruleset, 1, rule, 0) != 0:  # PATH_BENEATH
                            fail('landlock_add_rule %s' % d)
                    finally:
                        _bos.close(fd)
                if libc.syscall(446, ruleset, 0) != 0:
                    fail('landlock_restrict_self')
            finally:
                _bos.close(ruleset)
            layers.append('landlock')
        if nr is not None:
            # capset(v3, this process): no capability left in any namespace.
            header = (ctypes.c_uint32 * 2)(0x20080522, 0)
            data = (ctypes.c_uint32 * 6)()
            if libc.syscall(nr[1], ctypes.byref(header), ctypes.byref(data)) != 0:
                fail('capset')
        if nr is not None:
            _seccomp(ctypes, libc, machine)
            layers.append('seccomp')
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    finally:
        for name in list(_bsys.modules):
            if name == 'ctypes' or name.startswith('ctypes.') or name == '_ctypes':
                del _bsys.modules[name]
    return layers, refused
`;
