package verify

import (
	"fmt"
	"path"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// A Python module in a directory on sys.path shadows the standard
// library's or an installed module of the same name: `python -m pytest`
// puts the working directory (the workspace root) first on sys.path, and
// pytest puts the directory of each test module that is not in a package
// there too. A change that adds pytest.py, json.py or textwrap.py
// there replaces code the test runner itself runs, outside any
// test (where an exception or SystemExit is no test failure), so it can
// write the report and exit 0: it is marked like the runner's own files.

// pyStdlib is sys.stdlib_module_names of CPython 3.11.
const pyStdlib = `
	__future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs
	_codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections
	_collections_abc _compat_pickle _compression _contextvars _crypt _csv _ctypes _curses
	_curses_panel _datetime _dbm _decimal _elementtree _frozen_importlib _frozen_importlib_external
	_functools _gdbm _hashlib _heapq _imp _io _json _locale _lsprof _lzma _markupbase _md5 _msi
	_multibytecodec _multiprocessing _opcode _operator _osx_support _overlapped _pickle _posixshmem
	_posixsubprocess _py_abc _pydecimal _pyio _queue _random _scproxy _sha1 _sha256 _sha3 _sha512
	_signal _sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string _strptime _struct
	_symtable _thread _threading_local _tkinter _tokenize _tracemalloc _typing _uuid _warnings
	_weakref _weakrefset _winapi _zoneinfo abc aifc antigravity argparse array ast asynchat asyncio
	asyncore atexit audioop base64 bdb binascii bisect builtins bz2 cProfile calendar cgi cgitb
	chunk cmath cmd code codecs codeop collections colorsys compileall concurrent configparser
	contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal
	difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl filecmp
	fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob
	graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp importlib inspect io
	ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox mailcap marshal
	math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt ntpath
	nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools pipes
	pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile
	pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter
	runpy sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr
	socket socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string
	stringprep struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib
	tempfile termios textwrap this threading time timeit tkinter token tokenize tomllib trace
	traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid
	venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile
	zipimport zlib zoneinfo
`

// pyRunnerModules are the test runners and what they import at start.
const pyRunnerModules = "pytest _pytest pluggy iniconfig packaging py exceptiongroup tomli attr attrs colorama coverage typing_extensions nose unittest2 hypothesis"

// pyShadowed returns a reason for each changed Python module (a .py file,
// or a package's __init__.py) whose top-level name is a module of the
// standard library, a test runner or a module a check names (-m X, -p X),
// in a directory that is not itself a package (one that can be on
// sys.path). exists reports whether a workspace-relative path exists in
// the workspace with the change set on top.
func pyShadowed(v contract.Verify, changes []workspace.Change, exists func(string) bool) map[string]string {
	names := map[string]bool{}
	for _, n := range strings.Fields(pyStdlib + " " + pyRunnerModules) {
		names[n] = true
	}
	for _, c := range v.Checks {
		words := c.Run
		if c.Shell != "" {
			words = strings.Fields(c.Shell)
		}
		for i := 0; i+1 < len(words); i++ {
			if words[i] == "-m" || words[i] == "-p" {
				names[strings.SplitN(strings.TrimPrefix(words[i+1], "no:"), ".", 2)[0]] = true
			}
		}
	}
	out := map[string]string{}
	for _, c := range changes {
		if c.Op == workspace.OpDelete || !strings.HasSuffix(c.Path, ".py") {
			continue
		}
		p := path.Clean(c.Path)
		mod, dir := strings.TrimSuffix(path.Base(p), ".py"), path.Dir(p)
		if mod == "__init__" {
			mod, dir = path.Base(dir), path.Dir(dir)
			if mod == "." {
				continue
			}
		}
		if !names[mod] || (dir != "." && exists(path.Join(dir, "__init__.py"))) {
			continue // the working directory is on sys.path even when it is a package
		}
		where := "the workspace root"
		if dir != "." {
			where = dir
		}
		out[p] = fmt.Sprintf("%s %s, which shadows the Python module %s for code run from %s (python -m and pytest put such directories first on sys.path)", verb(c, p), p, mod, where)
	}
	return out
}
