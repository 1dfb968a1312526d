"""Machine code only for kernels something jumps to: numba's libraries, code-generated when first needed.

numba finishes every function it compiles as if Python were about to call it: it optimises the function's
module and emits its machine code at once, and writes that machine code to the cache. Most of picaemu's kernels
are never entered that way: they are callees, whose LLVM IR each caller links and optimises again inside its
own module (numba inlines across libraries this way), so their own optimised module and machine code are never
run. README line 1 spent about 3 of its 24 s of compiling on them (``bench/RESULTS.md``, "Machine code only
where jumped to, fifteenth session").

``LazyLibrary`` (installed as the CPU target's library class when this module is imported, before any kernel
compiles) links its callees and stops there: a library is *pending* until something needs an address in it.
- ``get_pointer_to_function`` (a call by address, ``numba_link.Linked``; numba's own runtime libraries) runs the
  optimisation and machine code first (``ensure_code``).
- A call from Python: numba builds a Python entry for every function it compiles (``get_executable``); for a
  pending library the entry is a ``PendingEntry`` that the dispatcher does not install. Python's first call
  misses the dispatcher's table, comes back through ``_compile_for_args``, and only then generates the code and
  installs the real entry, so later calls cost what they always cost.
- The cache: a pending library is saved as its module's bitcode (kind ``PENDING_KIND``: what callers link), and
  saved again with its machine code (numba's object kind) once something generated it, so a kernel Python calls
  is code-generated in one run and loaded in the next ones (``_resave``). Only picaemu's own cache folder holds
  pending entries (``OWN_LOCATORS``): numba code of another package in the process is cached as numba caches it.
numba's C entries (cfunc wrappers, for first-class function values, which picaemu never makes:
``numba_link.kernel``'s choice) are not built for the kernels of ``OWN_PACKAGES`` (picaemu) at all; its plain
``numba.njit`` kernels built them.
Their Python entries (numba's CPython wrappers, which unbox each argument: a fifth of the optimised code of README
line 1, for kernels only ever called by address) are built on Python's first call (``LazyLibrary.python_entry``,
from the ``PendingEntry``), not when the kernel compiles: into its library while that is pending, so that the
library's machine code and cache entry hold it; else (the kernel was called by address first, or loaded from the
cache with machine code but no entry) into a small library of its own that calls the kernel's machine code and
reads its environment's global; the kernel's cache entry is then saved again holding it (``WITH_ENTRIES_KIND``).
An entry built late adds constants to its function's environment (a boxed array's dtype) that the caches of
callers saved before it lack: an environment loaded again from a save that holds more constants gains them
(``_rebuild_environment``; numba kept the first copy it loaded, whose constants then ran short).
A compile that links a pending callee (loaded from the cache, or compiled in this process) needs nothing more
from it. The code that runs is unchanged: a callee always ran as linked into its caller's module, which is
optimised as before. numba's classes are patched for the whole process, so other numba code in it (a user's
script) gets the same behaviour.
"""

from __future__ import annotations

from typing import Any

from llvmlite import binding as ll
from numba import _dynfunc
from numba.core import caching, cgutils, codegen, compiler, cpu, dispatcher, environment, lowering
from numba.core.compiler_lock import global_compiler_lock, require_global_compiler_lock
from numba.core.runtime import nrtdynmod

PENDING_KIND = "picaemu-pending-bitcode"  # a cache entry holding a pending library's module, no machine code
# a cache entry holding a library's machine code (numba's object kind) and the Python entries built apart from it
WITH_ENTRIES_KIND = "picaemu-object-with-entries"
# the packages whose kernels get no C entry (module docstring)
OWN_PACKAGES: tuple[str, ...] = ("picaemu",)
# the cache locators whose entries may be pending (picaemu's own: ``picaemu.numba_cache`` names its locator here)
OWN_LOCATORS: tuple[type, ...] = ()


class LazyLibrary(codegen.JITCodeLibrary):
    """numba's JIT library, optimised and code-generated when an address in it is first needed (module
    docstring). ``pending``: linked, not yet optimised nor code-generated."""

    def __init__(self, codegen_: Any, name: str) -> None:
        super().__init__(codegen_, name)
        self.pending = False
        self._resave: tuple[caching.FunctionCache, Any, Any] | None = None  # (cache, signature, compile result)
        self._adding_entry = False  # ``python_entry`` is linking a Python entry into this pending library
        # a library holding only the Python entry of another's function: that function's environment's global
        self._environment_of_callee: str | None = None
        self._python_entries: list[LazyLibrary] = []  # such libraries for this one's functions
        self._cache_entry: tuple[caching.FunctionCache, Any, Any] | None = None  # where it is cached, and as what
        self._loaded_state: tuple[str, str, Any] | None = None  # numba's state it was loaded from (object kind)

    def add_ir_module(self, ir_module: Any) -> None:
        name = self._environment_of_callee
        if name in ir_module.globals and self._codegen._engine.is_symbol_defined(name):
            environment = ir_module.globals[name]  # the callee's own, not a copy (numba defines one per module)
            environment.linkage, environment.initializer = "external", None
        if not self._adding_entry:
            super().add_ir_module(ir_module)
            return
        # numba's ``add_ir_module`` into a library that has linked its callees (pending): its functions' passes
        ll_module = ll.parse_assembly(cgutils.normalize_ir_text(str(ir_module)))
        ll_module.name = ir_module.name
        ll_module.verify()
        self.add_llvm_module(ll_module)

    def python_entry(self, context: Any, fndesc: Any, environment: Any, release_gil: bool) -> int:
        """The address of ``fndesc``'s Python entry (numba's CPython wrapper), built on this first call from
        Python (module docstring): into this library while it is pending (and so cached with it), else into a
        library of its own that calls this one's machine code (cached with this one from then on)."""
        with global_compiler_lock:
            return self._python_entry(context, fndesc, environment, release_gil)

    def _python_entry(self, context: Any, fndesc: Any, environment: Any, release_gil: bool) -> int:
        name = fndesc.llvm_cpython_wrapper_name
        if self.pending and not _defines(self._final_module, name):
            linked = len(self._linking_libraries)
            self._adding_entry = True
            try:
                with context.push_code_library(self):  # (the helpers its unboxing calls are linked in)
                    _NUMBA_BUILD_PYTHON_ENTRY(context, self, fndesc, environment, None, release_gil)
            finally:
                self._adding_entry = False
            self._link(self._linking_libraries[linked:], already=self._linking_libraries[:linked])
            self._shared_module = None  # what callers link, and the cache saves, is made again with the entry
        if self.pending or self._codegen._engine.is_symbol_defined(name):
            return self.get_pointer_to_function(name)
        entry = self._codegen.create_library(f"{self.name}.python_entry")
        entry._environment_of_callee = context.get_env_name(fndesc)
        entry.enable_object_caching()  # (its machine code is cached with this library's)
        with context.push_code_library(entry):
            _NUMBA_BUILD_PYTHON_ENTRY(context, entry, fndesc, environment, None, release_gil)
        entry.finalize()
        self._python_entries.append(entry)  # kept alive with this library, and cached with it
        address = entry.get_pointer_to_function(name)
        self._codegen.set_env(context.get_env_name(fndesc), environment)  # a copy of its own, if it needed one
        if self._cache_entry is not None:  # saved again: its entry, and the constants the entry added to its
            cache, signature, result = self._cache_entry  # environment, are loaded with it from now on
            cache.save_overload(signature, result)
        return address

    def finalize(self) -> None:
        """numba's ``finalize`` up to the link of the callees: their IR is all a caller takes."""
        require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        self._link(self._linking_libraries)
        self._final_module.verify()
        self.pending = True
        self._finalized = True

    def _link(self, libraries: list[Any], already: list[Any] | tuple[()] = ()) -> None:
        """Link each of ``libraries`` not in ``already`` into the final module, once (numba's ``finalize`` step)."""
        seen = set(already)
        for library in libraries:
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)

    def ensure_code(self) -> None:
        """Optimise the module and generate its machine code, if still pending; then set the environments of
        its Python entries and save it again with its machine code, if it was cached pending."""
        with global_compiler_lock:
            if not self.pending:
                return
            self.pending = False
            self._optimize_final_module()
            self._final_module.verify()
            self._finalize_final_module()
            engine = self._codegen._engine
            for name in [name for name in _DEFERRED_ENVIRONMENTS if engine.is_symbol_defined(name)]:
                _NUMBA_SET_ENV(self._codegen, name, _DEFERRED_ENVIRONMENTS.pop(name))
            if self._resave is not None:
                cache, signature, result = self._resave
                self._resave = None
                cache.save_overload(signature, result)

    def get_pointer_to_function(self, name: str) -> int:
        self._ensure_finalized()
        self.ensure_code()
        return super().get_pointer_to_function(name)

    def serialize_using_object_code(self) -> tuple[str, str, Any]:
        if self.pending:
            return (self.name, PENDING_KIND, self._final_module.as_bitcode())
        # (numba gives a loaded library's machine code to LLVM and keeps none: the loaded state is saved again)
        state = self._loaded_state or super().serialize_using_object_code()
        if not self._python_entries:
            return state
        entries = [entry.serialize_using_object_code() for entry in self._python_entries]
        return (self.name, WITH_ENTRIES_KIND, (state, entries))

    @classmethod
    def _unserialize(cls, codegen_: Any, state: tuple[str, str, Any]) -> Any:
        name, kind, data = state
        if kind == WITH_ENTRIES_KIND:
            own, entries = data
            library = super()._unserialize(codegen_, own)
            library._loaded_state = own
            library._python_entries = [codegen_.unserialize_library(entry) for entry in entries]
            return library
        if kind != PENDING_KIND:
            loaded = super()._unserialize(codegen_, state)
            loaded._loaded_state = state if kind == "object" else None
            return loaded
        library = codegen_.create_library(name)
        library.enable_object_caching()  # its machine code, once generated, is kept for a save
        library._final_module = ll.parse_bitcode(data)
        library.pending = True
        library._finalized = True
        return library


def _defines(module: Any, name: str) -> bool:
    """Whether the LLVM ``module`` defines a function ``name``."""
    try:
        return not module.get_function(name).is_declaration
    except NameError:
        return False


class PendingEntry:
    """The Python entry of a function whose library is pending or has no such entry yet: builds the entry and
    generates the code on its first use (module docstring). numba keys the function's lowering on its entry
    object, so this object stays that key. ``context`` and ``release_gil``: the target context and ``nogil`` its
    entry is built with, those of the kernel's compile (its dispatcher sets them before the first call: a context
    loaded from the cache is the target's own, without the kernel's NRT and error model)."""

    def __init__(self, context: Any, library: LazyLibrary, fndesc: Any, environment: Any) -> None:
        self.context = context
        self.library = library
        self.fndesc = fndesc
        self.environment = environment
        self.release_gil = False
        self._entry: Any = None

    def entry(self) -> Any:
        """numba's compiled Python entry (building it and generating the library's machine code first)."""
        if self._entry is None:
            address = self.library.python_entry(self.context, self.fndesc, self.environment, self.release_gil)
            name = self.fndesc.qualname.split(".")[-1]
            doc = f"compiled wrapper for {self.fndesc.qualname!r}"
            self._entry = _dynfunc.make_function(
                self.fndesc.lookup_module(), name, doc, address, self.environment, (self.library,)
            )
        return self._entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.entry()(*args, **kwargs)


# numba Environments (by their global's name) whose library has no machine code yet, set when it gets it
_DEFERRED_ENVIRONMENTS: dict[str, Any] = {}
_NUMBA_SET_ENV = codegen.JITCPUCodegen.set_env
_NUMBA_GET_EXECUTABLE = cpu.CPUContext.get_executable
_DISPATCHER: Any = dispatcher.Dispatcher  # (numba's stubs do not declare the methods replaced here)
_NUMBA_ADD_OVERLOAD = _DISPATCHER.add_overload
_NUMBA_COMPILE_FOR_ARGS = _DISPATCHER._compile_for_args
_NUMBA_SAVE_OVERLOAD = caching.FunctionCache.save_overload
_NUMBA_CREATE_CFUNC_WRAPPER = lowering.Lower.create_cfunc_wrapper
_NUMBA_CREATE_CPYTHON_WRAPPER = lowering.Lower.create_cpython_wrapper
_NUMBA_BUILD_PYTHON_ENTRY = cpu.CPUContext.create_cpython_wrapper
_NUMBA_REBUILD_ENVIRONMENT = environment._rebuild_env
_NUMBA_COMPILE_RUNTIME = nrtdynmod.compile_nrt_functions


def _set_env(self: Any, name: str, environment: Any) -> None:
    """numba's ``set_env`` (writes the environment's address into its global), deferred while no machine code
    defines the global."""
    if self._engine.is_symbol_defined(name):
        _NUMBA_SET_ENV(self, name, environment)
    else:
        _DEFERRED_ENVIRONMENTS[name] = environment


def _get_executable(self: Any, library: Any, fndesc: Any, environment: Any) -> Any:
    if not isinstance(library, LazyLibrary):
        return _NUMBA_GET_EXECUTABLE(self, library, fndesc, environment)
    library._ensure_finalized()
    if library.pending or not library.codegen._engine.is_symbol_defined(fndesc.llvm_cpython_wrapper_name):
        library.codegen.set_env(self.get_env_name(fndesc), environment)  # (deferred while its global has no code)
        return PendingEntry(self, library, fndesc, environment)
    return _NUMBA_GET_EXECUTABLE(self, library, fndesc, environment)


def _add_overload(self: Any, result: Any) -> None:
    """numba's ``add_overload``, which does not install a pending entry in the dispatcher's table (its C code
    would jump into it): Python's first call comes back through ``_compile_for_args``."""
    if isinstance(result.entry_point, PendingEntry):
        self.overloads[tuple(result.signature.args)] = result
    else:
        _NUMBA_ADD_OVERLOAD(self, result)


def _compile_for_args(self: Any, *args: Any, **kwargs: Any) -> Any:
    entry = _NUMBA_COMPILE_FOR_ARGS(self, *args, **kwargs)
    if not isinstance(entry, PendingEntry):
        return entry
    if entry._entry is None:  # the entry is built as the kernel was compiled: its flags' context (NRT, GIL ...)
        flags = compiler.Flags()
        self.targetdescr.options.parse_as_flags(flags, self.targetoptions)
        flags = self._compiler._customize_flags(flags)
        entry.context = compiler._make_subtarget(self.targetdescr.target_context, flags)
        entry.release_gil = flags.release_gil
    compiled = entry.entry()
    for argtypes, result in list(self.overloads.items()):
        if result.entry_point is entry:
            self._insert([t._code for t in argtypes], compiled, result.objectmode)
    return compiled


def _create_cfunc_wrapper(self: Any) -> None:
    """numba's ``Lower.create_cfunc_wrapper``, skipped for a kernel of ``OWN_PACKAGES`` (module docstring)."""
    if self.fndesc.modname.split(".")[0] not in OWN_PACKAGES:
        _NUMBA_CREATE_CFUNC_WRAPPER(self)


def _create_cpython_wrapper(self: Any, release_gil: bool = False) -> None:
    """numba's ``Lower.create_cpython_wrapper``, left for a kernel of ``OWN_PACKAGES`` to its first call from
    Python (``LazyLibrary.python_entry``; module docstring)."""
    own = self.fndesc.modname.split(".")[0] in OWN_PACKAGES
    if not (own and isinstance(self.library, LazyLibrary) and self.genlower is None):
        _NUMBA_CREATE_CPYTHON_WRAPPER(self, release_gil)


def _compile_runtime(context: Any) -> Any:
    """numba's runtime library (``NRT_decref`` and the other functions a Python entry or a kernel calls by name),
    given its machine code as numba makes it (``NRT.initialize``, at the first refresh). Lazy like every library,
    it stayed pending until an address in it was asked for: an entry built or loaded before that, in a process
    whose first kernel call came from Python, called address 0 (the packets fuzz target, twentieth session)."""
    library = _NUMBA_COMPILE_RUNTIME(context)
    if isinstance(library, LazyLibrary):
        library.ensure_code()
    return library


def _rebuild_environment(modname: str, consts: list, env_name: str) -> Any:
    """numba's ``_rebuild_env`` (an environment from a cache entry: the one of that name this process already has,
    else a new one), whose constants are extended with those a later save holds beyond them (module docstring):
    constants are only ever appended, so those they share are the same."""
    known = environment.lookup_environment(env_name)
    if known is not None and len(known.consts) < len(consts):
        known.consts.extend(consts[len(known.consts) :])
    return _NUMBA_REBUILD_ENVIRONMENT(modname, consts, env_name)


def _save_overload(self: caching.FunctionCache, sig: Any, data: Any) -> None:
    """numba's ``save_overload``. A pending library of picaemu's cache (``OWN_LOCATORS``) is saved pending and
    remembers the cache, to be saved again with its machine code; another package's gets its machine code first
    (numba alone could not load a pending entry, and that package's next run may not import picaemu)."""
    library = getattr(data, "library", None)
    if isinstance(library, LazyLibrary) and library.pending and not isinstance(self._impl.locator, OWN_LOCATORS):
        library.ensure_code()
    _NUMBA_SAVE_OVERLOAD(self, sig, data)
    remember_cache(self, sig, data)


def remember_cache(cache: caching.FunctionCache, sig: Any, result: Any) -> None:
    """Whom to save ``result`` with again when its library gets its machine code or a Python entry apart from it
    (a load or save of it)."""
    library = getattr(result, "library", None)
    if isinstance(library, LazyLibrary):
        library._cache_entry = (cache, sig, result)
        if library.pending:
            library._resave = (cache, sig, result)


codegen.JITCPUCodegen._library_class = LazyLibrary
codegen.JITCPUCodegen.set_env = _set_env
cpu.CPUContext.get_executable = _get_executable
_DISPATCHER.add_overload = _add_overload
_DISPATCHER._compile_for_args = _compile_for_args
caching.FunctionCache.save_overload = _save_overload
lowering.Lower.create_cfunc_wrapper = _create_cfunc_wrapper
lowering.Lower.create_cpython_wrapper = _create_cpython_wrapper
# a cached environment names its rebuilder ``numba.core.environment._rebuild_env``, as numba alone would load it
_rebuild_environment.__module__, _rebuild_environment.__qualname__ = environment.__name__, "_rebuild_env"
_rebuild_environment.__name__ = "_rebuild_env"
environment._rebuild_env = _rebuild_environment
nrtdynmod.compile_nrt_functions = _compile_runtime
