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
A compile that links a pending callee (loaded from the cache, or compiled in this process) needs nothing more
from it. The code that runs is unchanged: a callee always ran as linked into its caller's module, which is
optimised as before. numba's classes are patched for the whole process, so other numba code in it (a user's
script) gets the same behaviour.
"""

from __future__ import annotations

from typing import Any

from llvmlite import binding as ll
from numba import _dynfunc
from numba.core import caching, codegen, cpu, dispatcher, lowering
from numba.core.compiler_lock import global_compiler_lock, require_global_compiler_lock

PENDING_KIND = "picaemu-pending-bitcode"  # a cache entry holding a pending library's module, no machine code
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

    def finalize(self) -> None:
        """numba's ``finalize`` up to the link of the callees: their IR is all a caller takes."""
        require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._final_module.verify()
        self.pending = True
        self._finalized = True

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
        return super().serialize_using_object_code()

    @classmethod
    def _unserialize(cls, codegen_: Any, state: tuple[str, str, Any]) -> Any:
        name, kind, data = state
        if kind != PENDING_KIND:
            return super()._unserialize(codegen_, state)
        library = codegen_.create_library(name)
        library.enable_object_caching()  # its machine code, once generated, is kept for a save
        library._final_module = ll.parse_bitcode(data)
        library.pending = True
        library._finalized = True
        return library


class PendingEntry:
    """The Python entry of a function in a pending library: generates the code on its first use (module
    docstring). numba keys the function's lowering on its entry object, so this object stays that key."""

    def __init__(self, library: LazyLibrary, fndesc: Any, environment: Any) -> None:
        self.library = library
        self.fndesc = fndesc
        self.environment = environment
        self._entry: Any = None

    def entry(self) -> Any:
        """numba's compiled Python entry (generating the library's machine code first)."""
        if self._entry is None:
            address = self.library.get_pointer_to_function(self.fndesc.llvm_cpython_wrapper_name)
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


def _set_env(self: Any, name: str, environment: Any) -> None:
    """numba's ``set_env`` (writes the environment's address into its global), deferred while no machine code
    defines the global."""
    if self._engine.is_symbol_defined(name):
        _NUMBA_SET_ENV(self, name, environment)
    else:
        _DEFERRED_ENVIRONMENTS[name] = environment


def _get_executable(self: Any, library: Any, fndesc: Any, environment: Any) -> Any:
    if isinstance(library, LazyLibrary):
        library._ensure_finalized()
    if isinstance(library, LazyLibrary) and library.pending:
        library.codegen.set_env(self.get_env_name(fndesc), environment)  # deferred: its global comes with the code
        return PendingEntry(library, fndesc, environment)
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
    compiled = entry.entry()
    for argtypes, result in list(self.overloads.items()):
        if result.entry_point is entry:
            self._insert([t._code for t in argtypes], compiled, result.objectmode)
    return compiled


def _create_cfunc_wrapper(self: Any) -> None:
    """numba's ``Lower.create_cfunc_wrapper``, skipped for a kernel of ``OWN_PACKAGES`` (module docstring)."""
    if self.fndesc.modname.split(".")[0] not in OWN_PACKAGES:
        _NUMBA_CREATE_CFUNC_WRAPPER(self)


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
    """Whom to save ``result`` with again when its library gets its machine code (a load or save of it)."""
    library = getattr(result, "library", None)
    if isinstance(library, LazyLibrary) and library.pending:
        library._resave = (cache, sig, result)


codegen.JITCPUCodegen._library_class = LazyLibrary
codegen.JITCPUCodegen.set_env = _set_env
cpu.CPUContext.get_executable = _get_executable
_DISPATCHER.add_overload = _add_overload
_DISPATCHER._compile_for_args = _compile_for_args
caching.FunctionCache.save_overload = _save_overload
lowering.Lower.create_cfunc_wrapper = _create_cfunc_wrapper
