import { PYTHON_BOUNDARY_SOURCE } from './boundary-source.js';

/**
 * The Python side of the Python template engine (docs/expansion.md, "Python templates" and "Isolation"), run as
 * `python3 -I -c <this source>`: one process per expansion run, one JSON request per line on
 * stdin, one JSON answer per line on stdout.
 *
 * Request:  {"id", "name", "source"?, "context": {properties, env, imports}, "files": {name: text},
 *            "timeout": seconds}; no "source" when it is the file of that name in the file set.
 * Answer:   {"id", "ok": true, "text": "..."} | {"id", "ok": true, "data": {...}, "wire"?: true}
 *         | {"id", "ok": false, "kind": "error"|"blocked"|"limit", "message", "file", "line"}
 *
 * Isolation: the operating system's boundary (boundary-source.ts), entered first; inside it, the
 * inner layer: an address-space limit (RLIMIT_AS), a per-template timer, and an audit hook that
 * refuses sockets, subprocesses, `os.system`, dangerous imports and any file open other than
 * reading Python's own library; `os.stat` and the other functions that inspect a path (no audit
 * event) are wrapped with the same rule. Template imports are served from memory by a meta-path finder,
 * so templates need no file access at all.
 *
 * Data travels in the wire form of python/values.ts both ways: a float with an integral value as
 * {"\u0000float": n}, a dict whose key order JS would change as {"\u0000dict": [k1, v1, …]}.
 */
export const PYTHON_RUNNER_SOURCE = `${PYTHON_BOUNDARY_SOURCE}${String.raw`
import sys, io, types, resource, time
# _signal and _json, the C halves of signal and json: the Python halves import re and enum (and
# linecache imports tokenize, and re), ~9 ms of CPU at every start (docs/expansion.md, "Speed").
# They load when something needs them: a template that imports them, an error's traceback, the
# wire check below when its quick test cannot decide.
try:
    import _signal as signal, _json
except ImportError:  # an interpreter without them (PyPy): the modules themselves
    import signal
    _json = None
import os.path as _osp
from importlib.machinery import ModuleSpec as _ModuleSpec

# What the process imports at its start is what every run pays for (docs/expansion.md, "Speed"):
# traceback (errors only), PyYAML (templates that import yaml) and importlib's abstract classes
# (~40 ms of CPU together) are left out and loaded when needed.

# The standard library modules a template imports are loaded when it imports them (reading
# Python's own library is allowed below); none is written back as bytecode, which the audit hook
# would refuse as a write.
sys.dont_write_bytecode = True

_out = sys.stdout
_in = sys.stdin
_mem = int(sys.argv[1]) if len(sys.argv) > 1 else 512
try:
    resource.setrlimit(resource.RLIMIT_AS, (_mem * 1024 * 1024, _mem * 1024 * 1024))
except Exception:
    pass
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
except Exception:
    pass

# The operating system's boundary (python/boundary-source.ts), before any template runs; after
# RLIMIT_NPROC, which a new user namespace takes over as its own bound.
try:
    _boundary, _refused = _enter_boundary()
except Exception as e:
    _boundary, _refused = [], str(e)

_LIB_DIRS = tuple(sorted({_osp.realpath(p) + '/' for p in sys.path if p and _osp.isdir(p)} |
                         {_osp.realpath(_osp.dirname(types.__file__)) + '/'}))
_BLOCKED_MODULES = {'subprocess', 'socket', '_socket', 'ssl', '_ssl', 'ctypes', '_ctypes', 'multiprocessing',
                    '_posixsubprocess', 'pty', 'http', 'urllib', 'ftplib', 'smtplib', 'telnetlib', 'asyncio',
                    'selectors', 'select', 'mmap', 'fcntl', 'shutil', 'tempfile', 'webbrowser', 'requests', 'pickle'}

class Blocked(PermissionError):
    pass

class TemplateTimeout(BaseException):
    pass

_state = {'blocked': None, 'active': False}

def _block(what):
    if _state['blocked'] is None:
        _state['blocked'] = what
    raise Blocked(what + ' is blocked in templates')

import _thread
_MAIN_THREAD = _thread.get_ident()

def _checking():
    # While a template runs, and always in a thread a template started (it may outlive the
    # template and run while the runner's own code does).
    return _state['active'] or _thread.get_ident() != _MAIN_THREAD

def _audit(event, args):
    if not _checking():
        return
    if event == 'open':
        path, mode = args[0], args[1]
        if isinstance(path, int):
            return
        writing = isinstance(mode, str) and any(c in mode for c in 'wax+')
        if isinstance(args[2], int) and args[2] & 3:
            writing = True
        if writing or not _readable(path):
            _block("opening '%s'" % path)
    elif event in ('os.listdir', 'os.scandir'):
        p = args[0]
        if p is None or not _readable(p):
            _block("listing directory '%s'" % p)
    elif event.startswith('socket.'):
        _block('network access (%s)' % event)
    elif event in ('subprocess.Popen', 'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork',
                   'os.forkpty', 'os.kill', 'os.killpg', 'pty.spawn', 'os.startfile', 'signal.pthread_kill'):
        _block('starting a process (%s)' % event)
    elif event.startswith('ctypes.') or event in ('os.remove', 'os.rename', 'os.rmdir', 'os.mkdir', 'os.chmod',
                                                   'os.chown', 'os.truncate', 'os.link', 'os.symlink', 'os.putenv',
                                                   'os.unsetenv', 'os.chdir', 'shutil.rmtree', 'sys.setprofile',
                                                   'sys.settrace', 'sys.addaudithook'):
        _block(event)
    elif event == 'import':
        name = args[0] or ''
        if name.split('.')[0] in _BLOCKED_MODULES:
            _block("importing '%s'" % name)

# The one rule for reading, listing and inspecting (stat, access, readlink...): Python's own
# library only (its directories, and the entries of sys.path the import system looks at), so a
# template learns nothing of the machine's files, not even whether one exists or its size
# (docs/expansion.md, "Isolation"). Python raises no audit event for stat, so the functions that
# inspect a path are wrapped, in os and in posix (the import system calls posix's).
def _ancestors(path):
    out = set()
    while True:
        out.add(path)
        parent = _osp.dirname(path)
        if parent == path:
            return out
        path = parent

# The entries of sys.path and every directory above Python's library may be inspected, not
# listed (the import system looks at them; that they exist tells nothing).
_SYS_PATH = frozenset(a for p in list(sys.path) + [d.rstrip('/') for d in _LIB_DIRS] if p
                      for a in _ancestors(_osp.realpath(p)))
import os as _os, posix as _posix, stat as _stat
_raw_lstat, _raw_readlink, _raw_getcwd = _posix.lstat, _posix.readlink, _posix.getcwd

def _resolve(path):
    # The path the kernel would reach, every symlink followed with the unwrapped functions below,
    # so deciding needs no shared state (no flag another thread or a signal handler could see
    # set) and never calls the wrapped ones. None when it cannot be decided: a symlink loop, an
    # unreadable link, or a '..' after a component that does not exist (the kernel would stop
    # there, and what lies beyond must not be learned from where the path seems to lead).
    if isinstance(path, bytes):
        path = _os.fsdecode(path)
    if not path.startswith('/'):
        path = _raw_getcwd() + '/' + path
    resolved = ''
    rest = path.split('/')
    rest.reverse()
    hops = 0
    missing = False
    while rest:
        name = rest.pop()
        if name in ('', '.'):
            continue
        if name == '..':
            if missing:
                return None
            resolved = resolved.rsplit('/', 1)[0]
            continue
        candidate = resolved + '/' + name
        if missing:
            resolved = candidate
            continue
        try:
            mode = _raw_lstat(candidate).st_mode
        except OSError:
            missing = True
            resolved = candidate
            continue
        if not _stat.S_ISLNK(mode):
            resolved = candidate
            continue
        hops += 1
        if hops > 40:
            return None
        try:
            target = _raw_readlink(candidate)
        except OSError:
            return None
        if target.startswith('/'):
            resolved = ''
        parts = target.split('/')
        parts.reverse()
        rest.extend(parts)
    return resolved or '/'

def _readable(path, inspecting=False):
    try:
        p = _resolve(path if isinstance(path, (str, bytes)) else _os.fspath(path))
    except Exception:
        return False
    return p is not None and (p.startswith(_LIB_DIRS) or (inspecting and p in _SYS_PATH))

def _inspecting(fn):
    def inspect(path, *args, **kwargs):
        if _checking() and not isinstance(path, int) and not _readable(path, True):
            _block("inspecting '%s'" % (path,))
        return fn(path, *args, **kwargs)
    inspect.__name__ = fn.__name__
    inspect.__qualname__ = fn.__qualname__
    return inspect

for _name in ('stat', 'lstat', 'access', 'readlink', 'statvfs', 'pathconf', 'getxattr', 'listxattr', 'chdir'):
    _fn = getattr(_posix, _name, None)
    if _fn is not None:
        _wrapped = _inspecting(_fn)
        setattr(_posix, _name, _wrapped)
        if getattr(_os, _name, None) is _fn:
            setattr(_os, _name, _wrapped)
del _name, _fn, _wrapped

_files = {}
_template_modules = set()

# The sources of the templates run so far, for tracebacks: linecache holds them once something
# imports it (an error's traceback, a template), as it held them when the runner imported it first.
_sources = {}
_linecache_loading = [False]

def _remember_source(name, source):
    _sources[name] = (len(source), None, source.splitlines(True), name)
    lc = sys.modules.get('linecache')
    if lc is not None and not _linecache_loading[0]:
        lc.cache[name] = _sources[name]

class _AdaptingFinder(object):
    """Loads a module under its own name when something first imports it, then adapt(module,
    real) gives what the name is for the rest of the run: DM's 'yaml' (below), linecache holding
    the templates' sources."""
    def __init__(self, name, adapt, loading):
        self.name, self.adapt, self.loading = name, adapt, loading
    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self.loading[0]:
            return None
        return _ModuleSpec(fullname, self)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        sys.modules.pop(self.name, None)
        self.loading[0] = True
        try:
            real = __import__(self.name)
        except ImportError:
            raise ModuleNotFoundError('No module named %r' % self.name, name=self.name)
        finally:
            self.loading[0] = False
            sys.modules.pop(self.name, None)
        sys.modules[self.name] = self.adapt(module, real)

def _with_sources(module, real):
    real.cache.update(_sources)
    module.__dict__.update(real.__dict__)
    return real

sys.meta_path.insert(0, _AdaptingFinder('linecache', _with_sources, _linecache_loading))

# Modules the runner loaded at its start before it left json's, re's, signal's and linecache's
# Python halves out (above): their names stay the standard library's, never an imported file's,
# for templates and for the runner's own later imports alike.
_STDLIB_FIRST = frozenset(('_collections', '_functools', '_operator', '_sre', 'collections', 'copyreg',
                           'enum', 'functools', 'itertools', 'json', 'keyword', 'linecache', 'operator',
                           're', 'reprlib', 'signal', 'token', 'tokenize'))

class _ImportsFinder(object):
    """Makes the imports importable by path: helpers/common.py is 'helpers.common'."""
    def _lookup(self, fullname):
        base = fullname.replace('.', '/')
        if base + '.py' in _files:
            return base + '.py', False
        if base + '/__init__.py' in _files:
            return base + '/__init__.py', True
        prefix = base + '/'
        if any(k.startswith(prefix) for k in _files):
            return None, True
        return None, None
    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split('.')[0]
        if top in _STDLIB_FIRST or (_yaml_loading[0] and top == 'yaml'):
            return None
        filename, is_pkg = self._lookup(fullname)
        if is_pkg is None:
            return None
        return _ModuleSpec(fullname, self, origin=filename or fullname, is_package=bool(is_pkg))
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        filename, _ = self._lookup(module.__name__)
        _template_modules.add(module.__name__)
        if filename is None:
            return
        source = _files[filename]
        _remember_source(filename, source)
        module.__file__ = filename
        exec(compile(source, filename, 'exec'), module.__dict__)

sys.meta_path.insert(0, _ImportsFinder())

class _Py2Dict(dict):
    """A dict that also answers Python 2's mapping methods (DM ran templates with Python 2.7)."""
    __slots__ = ()
    def iteritems(self):
        return iter(self.items())
    def iterkeys(self):
        return iter(self.keys())
    def itervalues(self):
        return iter(self.values())
    def has_key(self, key):
        return key in self
    def viewitems(self):
        return self.items()
    def viewkeys(self):
        return self.keys()
    def viewvalues(self):
        return self.values()

def _make_yaml_module(m, real):
    """'yaml' as DM's templates knew it (PyYAML 3): load() without a Loader is allowed; here
    every load is a safe load, whatever Loader is named, so templates cannot construct objects.
    Fills the module m from PyYAML's own module real."""
    m.__dict__.update({k: v for k, v in real.__dict__.items() if not k.startswith('__')})
    safe = getattr(real, 'CSafeLoader', real.SafeLoader)
    for name in ('Loader', 'FullLoader', 'UnsafeLoader', 'CLoader', 'CFullLoader', 'CUnsafeLoader', 'BaseLoader'):
        if hasattr(real, name) and name != 'BaseLoader':
            setattr(m, name, safe)
    def load(stream, Loader=None):
        return real.load(stream, Loader=safe)
    def load_all(stream, Loader=None):
        return real.load_all(stream, Loader=safe)
    def dump(data, stream=None, Dumper=None, **kwds):
        kwds.setdefault('default_flow_style', None)
        return real.dump(data, stream, Dumper=Dumper or real.Dumper, **kwds)
    def dump_all(documents, stream=None, Dumper=None, **kwds):
        kwds.setdefault('default_flow_style', None)
        return real.dump_all(documents, stream, Dumper=Dumper or real.Dumper, **kwds)
    def safe_dump(data, stream=None, **kwds):
        kwds.setdefault('default_flow_style', None)
        return real.safe_dump(data, stream, **kwds)
    m.load = m.full_load = m.unsafe_load = m.safe_load = load
    m.load_all = m.full_load_all = m.unsafe_load_all = m.safe_load_all = load_all
    m.dump, m.dump_all, m.safe_dump = dump, dump_all, safe_dump
    for dumper in (real.Dumper, real.SafeDumper):
        real.add_representer(_Py2Dict, real.representer.SafeRepresenter.represent_dict, Dumper=dumper)

_yaml_loading = [False]

def _dm_yaml(module, real):
    # Makes DM's 'yaml' (above) when a template first imports yaml: PyYAML is loaded under its
    # own name, then 'yaml' is this module for the rest of the run (template files included).
    _make_yaml_module(module, real)
    return module

sys.meta_path.insert(0, _AdaptingFinder('yaml', _dm_yaml, _yaml_loading))

# Python 2-only syntax: SyntaxError messages that mean the template was written for Python 2.
_PY2_SYNTAX = ("Missing parentheses in call to 'print'", "Missing parentheses in call to 'exec'",
               'multiple exception types must be parenthesized', 'leading zeros in decimal integer literals')

class _Context(object):
    def __init__(self, properties, env, imports):
        self.properties = properties
        self.env = env
        self.imports = imports
    def __getitem__(self, key):
        return getattr(self, key)

def _on_alarm(signum, frame):
    raise TemplateTimeout()

signal.signal(signal.SIGALRM, _on_alarm)

# The runner's signal handlers, put back after each template with the timers a template may set:
# nothing a template installed runs while the runner's own code does (docs/expansion.md, "Isolation").
_HANDLERS = {s: signal.getsignal(s) for s in signal.valid_signals()}

def _restore_signals():
    for timer in (signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)
    for s, handler in _HANDLERS.items():
        if signal.getsignal(s) is not handler:
            signal.signal(s, signal.SIG_DFL if handler is None else handler)

def _location(tb_list, names):
    for fr in reversed(tb_list):
        if fr.filename in names:
            return fr.filename, fr.lineno
    return None, None

_file_sets = {}
_code_cache = {}
_current_set = [None]

def _render(req):
    global _files
    name = req['name']
    set_id = req.get('filesId')
    if req.get('files') is not None:
        _file_sets[set_id] = req['files']
    base = _file_sets.get(set_id, {})
    ctx = req['context']
    if req.get('importsAreFiles'):
        ctx = dict(ctx)
        ctx['imports'] = base
    source = req['source'] if 'source' in req else base.get(name, '')
    if _current_set[0] != set_id or base.get(name, source) != source:
        # Another set of files: helper modules imported from the previous set must not leak.
        for mod in list(_template_modules):
            sys.modules.pop(mod, None)
        _template_modules.clear()
        _current_set[0] = set_id
    _files = dict(base)
    _files[name] = source
    _remember_source(name, source)
    _state['blocked'] = None
    sys.stdout = io.StringIO()
    timeout = float(req.get('timeout') or 10)
    result = None
    error = None
    try:
        code = _code_cache.get((name, source))
        if code is None:
            code = compile(source, name, 'exec')
            if len(_code_cache) > 256:
                _code_cache.clear()
            _code_cache[(name, source)] = code
        module = types.ModuleType(name.rsplit('/', 1)[-1].rsplit('.', 1)[0])
        module.__file__ = name
        signal.setitimer(signal.ITIMER_REAL, timeout)
        _started = time.process_time()
        _state['active'] = True
        try:
            exec(code, module.__dict__)
            fn = module.__dict__.get('GenerateConfig') or module.__dict__.get('generate_config')
            if fn is None:
                raise NameError('%s defines neither GenerateConfig(context) nor generate_config(context)' % name)
            result = fn(_Context(ctx.get('properties') or _Py2Dict(), ctx.get('env') or _Py2Dict(),
                                 _Py2Dict(ctx.get('imports') or {})))
        finally:
            _state['active'] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as e:
        error = e
    finally:
        _state['active'] = False
        _restore_signals()
    if _state['blocked'] is not None:
        return {'ok': False, 'kind': 'blocked', 'message': _state['blocked'] + ' is blocked in templates',
                'file': name, 'line': None}
    if error is not None:
        import traceback
        tb = traceback.extract_tb(error.__traceback__)
        names = set(_files)
        f, line = _location(tb, names)
        if isinstance(error, SyntaxError) and error.filename in names:
            f, line = error.filename, error.lineno
        kind = 'error'
        if isinstance(error, TemplateTimeout):
            kind, msg = 'limit', 'took longer than %gs (time limit)' % timeout
        elif isinstance(error, MemoryError) or _exhausted(error):
            kind, msg = 'limit', 'ran out of memory (limit %d MB)' % _mem
        elif isinstance(error, RecursionError):
            kind, msg = 'limit', 'recursion limit exceeded'
        else:
            msg = '%s: %s' % (type(error).__name__, error)
            if isinstance(error, SyntaxError):
                msg = 'SyntaxError: %s' % error.msg
                if any(p in (error.msg or '') for p in _PY2_SYNTAX):
                    msg += (' (this is Python 2 syntax: the template was written for Python 2.7, as Deployment'
                            ' Manager ran it; dm runs Python templates with Python 3)')
        return {'ok': False, 'kind': kind, 'message': msg, 'file': f or name, 'line': line}
    ran = (time.process_time() - _started) * 1000
    if isinstance(result, str):
        return {'ok': True, 'text': result, 'ms': [ran, 0]}
    try:
        encoding = time.process_time()
        text = _dumps(result, _unjson)
        if not _may_need_wire(text):
            return {'ok': True, 'data': _Raw(text), 'ms': [ran, (time.process_time() - encoding) * 1000]}
        text = _dumps(_to_wire(result), _unjson)
        return {'ok': True, 'wire': True, 'data': _Raw(text), 'ms': [ran, (time.process_time() - encoding) * 1000]}
    except (TypeError, ValueError) as e:
        return {'ok': False, 'kind': 'error', 'message': 'GenerateConfig returned a value that is not YAML/JSON data: %s' % e,
                'file': name, 'line': None}

def _exhausted(error):
    # CPython 3.11 reports an allocation that failed inside its evaluation loop (a deep recursion
    # under a raised recursion limit reaching the memory limit) as this SystemError, not as a
    # MemoryError: it is one when the process's peak memory reached the limit (docs/expansion.md,
    # "Isolation").
    if not isinstance(error, SystemError) or 'without exception set' not in str(error):
        return False
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >= _mem * 1024 * 0.9

# What json.dumps writes for a float with an integral value (1.0, 1e+16), an integer-like key, or
# a key starting with NUL: only then is the result walked into the wire form.
_MAY_NEED_WIRE = []

def _may_need_wire(text):
    # Each alternative of the expression needs one of these substrings: without any, no match
    # (and re, with enum, is not loaded for it).
    if ('.0' not in text and 'e+' not in text and '"\\u0000' not in text
            and not any(d + '": ' in text for d in '0123456789')):
        return False
    if not _MAY_NEED_WIRE:
        import re
        _MAY_NEED_WIRE.append(re.compile(r'[0-9]\.0(?=[,\]}]|$)|[0-9]e\+|"(?:0|[1-9][0-9]*)": |"\\u0000'))
    return _MAY_NEED_WIRE[0].search(text) is not None

def _json_codec():
    # json.dumps(value, default=...) and json.loads(text, object_hook=_from_wire) as the json
    # module does them with its C accelerator, without importing it; the json module itself where
    # this interpreter's accelerator is not the one expected (checked on a sample).
    try:
        if _json is None:
            raise ImportError('no _json')
        class _Scanning(object):
            def __init__(self):
                self.strict = True
                self.object_hook = _from_wire
                self.object_pairs_hook = None
                self.parse_float = float
                self.parse_int = int
                self.parse_constant = {'-Infinity': float('-inf'), 'Infinity': float('inf'),
                                       'NaN': float('nan')}.__getitem__
                self.memo = {}
        scan = _json.make_scanner(_Scanning())
        def unknown(value):
            raise TypeError('Object of type %s is not JSON serializable' % type(value).__name__)
        def dumps(value, default=None):
            if isinstance(value, str):
                return _json.encode_basestring_ascii(value)
            chunks = _json.make_encoder({}, default or unknown, _json.encode_basestring_ascii, None,
                                        ': ', ', ', False, False, True)(value, 0)
            return ''.join(chunks)
        def loads(text):
            text = text.strip(' \t\n\r')
            try:
                value, end = scan(text, 0)
            except StopIteration:
                raise ValueError('not JSON: %r' % text[:80])
            if end != len(text):
                raise ValueError('not JSON: extra data at %d' % end)
            return value
        sample = {'a': [1, 2.5, None, True, 'x\u00e9"\n', 1e16], 'b': {}}
        if dumps(sample) != '{"a": [1, 2.5, null, true, "x\\u00e9\\"\\n", 1e+16], "b": {}}':
            raise ValueError('another encoder')
        if loads(' ' + dumps(sample) + '\n') != sample or loads('"x"') != 'x':
            raise ValueError('another decoder')
        return dumps, loads
    except Exception:
        import json
        return ((lambda value, default=None: json.dumps(value, default=default)),
                (lambda text: json.loads(text, object_hook=_from_wire)))


def _is_index_key(k):
    return k.isdigit() and k.isascii() and (k == '0' or k[0] != '0') and (len(k) < 10 or int(k) < 4294967295)

def _wire_key(k):
    if isinstance(k, str):
        return k
    if k is None:
        return 'null'
    if isinstance(k, bool):
        return 'true' if k else 'false'
    if isinstance(k, float):
        return repr(k)
    if isinstance(k, int):
        return str(k)
    raise TypeError('keys must be str, int, float, bool or None, not %s' % type(k).__name__)

def _to_wire(value):
    if isinstance(value, float):
        return {'\x00float': value} if value.is_integer() else value
    if isinstance(value, (list, tuple)):
        return [_to_wire(v) for v in value]
    if isinstance(value, dict):
        keys = [_wire_key(k) for k in value]
        # JS lists array-index keys first, ascending: the order survives only if that is the order.
        index_seen, last_index, keeps = False, -1, True
        for k in keys:
            if _is_index_key(k):
                if index_seen is None or int(k) < last_index:
                    keeps = False
                    break
                index_seen, last_index = True, int(k)
            else:
                if k.startswith('\x00'):
                    keeps = False
                    break
                index_seen = None
        values = [_to_wire(v) for v in value.values()]
        if keeps:
            return dict(zip(keys, values))
        flat = []
        for k, v in zip(keys, values):
            flat.append(k)
            flat.append(v)
        return {'\x00dict': flat}
    return value

def _from_wire(d):
    if len(d) == 1:
        if '\x00float' in d:
            return float(d['\x00float'])
        if '\x00dict' in d:
            flat = d['\x00dict']
            return _Py2Dict(zip(flat[0::2], flat[1::2]))
    return _Py2Dict(d)

class _Raw(object):
    """JSON text already encoded, spliced into the answer as is."""
    def __init__(self, text):
        self.text = text

def _encode(answer):
    data = answer.get('data')
    if isinstance(data, _Raw):
        rest = dict(answer)
        del rest['data']
        head = _dumps(rest)
        return head[:-1] + ', "data": ' + data.text + '}'
    return _dumps(answer)

def _unjson(value):
    if isinstance(value, (set, frozenset)):
        raise TypeError('a set is not JSON data')
    if isinstance(value, tuple):
        return list(value)
    raise TypeError('%s is not JSON data' % type(value).__name__)

# The warm-up (docs/expansion.md, "Speed"), asked for by the argument 'warm-up' after the memory
# limit (render-sandbox.ts, startRenderersEarly): requests of dm's own, decoded, rendered and
# encoded as a run's are, inside the boundary and under the audit hook, before the process says it
# is ready (and how many it served). Its file set has a negative number (a run's are positive);
# after it, what it left is dropped (its file set, compiled code, source, the current set) and
# stdout is the runner's again. It imports nothing, and its answers hold nothing that makes the
# wire check load re: the process has the modules loaded that it has without the warm-up.
_WARM_TEMPLATE = '''def GenerateConfig(context):
    name = context.env['name']
    p = context.properties
    labels = dict(p['labels'])
    labels['tier'] = 'app'
    resources = []
    for i in range(p['replicas']):
        resources.append({'name': '%s-%d' % (name, i), 'type': 'ConfigMap',
                          'properties': {'data': {'port': str(p['port'] + i), 'labels': labels}}})
    resources.append({'name': name + '-deploy', 'type': 'warm-up.jinja',
                      'properties': {'replicas': p['replicas'], 'labels': labels, 'port': p['port']}})
    return {'resources': resources}
'''

def _warm_up(count):
    global _files
    name, set_id = 'warm-up.py', -1
    try:
        for i in range(count):
            req = {'id': -1 - i, 'name': name, 'filesId': set_id, 'timeout': 10,
                   'context': {'properties': {'replicas': 2, 'port': 8000 + i, 'labels': {'app': 'warm'}},
                               'env': {'name': 'warm-up', 'deployment': 'd'}}}
            if i == 0:
                req['files'] = {name: _WARM_TEMPLATE}
            req = _loads(_dumps(req))
            answer = _render(req)
            answer['id'] = req['id']
            got = _loads(_encode(answer))
            resources = (got.get('data') or {}).get('resources') or [{}]
            if not got.get('ok') or len(resources) != 3 or resources[1].get('name') != 'warm-up-1':
                raise ValueError('the warm-up was answered %r' % (got,))
        return count
    finally:
        _file_sets.pop(set_id, None)
        _code_cache.pop((name, _WARM_TEMPLATE), None)
        _sources.pop(name, None)
        _current_set[0] = None
        _files = {}
        _state['blocked'] = None
        sys.stdout = _out

sys.addaudithook(_audit)
_dumps, _loads = _json_codec()
_ready = {'ready': True, 'boundary': _boundary, 'refused': _refused}
if sys.argv[2:3] == ['warm-up']:
    try:
        _ready['warmUp'] = _warm_up(60)
    except Exception as e:
        sys.stderr.write('the warm-up failed: %s\n' % (e,))
_out.write(_dumps(_ready) + '\n')
_out.flush()
for raw in _in:
    if not raw.strip():
        continue
    req = _loads(raw)
    try:
        answer = _render(req)
    except MemoryError:
        answer = {'ok': False, 'kind': 'limit', 'message': 'ran out of memory (limit %d MB)' % _mem, 'file': req.get('name'), 'line': None}
    answer['id'] = req.get('id')
    try:
        line = _encode(answer)
    except MemoryError:
        line = _dumps({'id': req.get('id'), 'ok': False, 'kind': 'limit', 'message': 'ran out of memory', 'file': req.get('name'), 'line': None})
    _out.write(line + '\n')
    _out.flush()
`}`;
