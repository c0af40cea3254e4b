/* _ctypes.pyd stand-in: ctypes' foreign-function call path
 * (PyCFuncPtr_call -> _ctypes_callproc -> ffi_call, libffi being linked in). */
#include "../common/dtcommon.h"
#include <stdlib.h>

typedef struct _object {
    volatile LONG ob_refcnt;
    void *ob_type;
} PyObject;
typedef struct {
    PyObject ob_base;
    void *b_ptr;
    const char *name;
} PyCFuncPtrObject;

typedef __int64 (*fn1)(void *);

NOINLINE static __int64 ffi_call(void *fn, int nargs, void **avalues)
{
    /* x64 Windows ABI: the first argument goes in RCX. */
    (void)nargs;
    return ((fn1)fn)(avalues[0]);
}

NOINLINE static __int64 _ctypes_callproc(void *pProc, int nargs, void **args)
{
    return ffi_call(pProc, nargs, args);
}

NOINLINE __declspec(dllexport) __int64 PyCFuncPtr_call(PyCFuncPtrObject *self, int nargs,
                                                       void **args)
{
    return _ctypes_callproc(self->b_ptr, nargs, args);
}

/* ctypes.CDLL(path).name */
NOINLINE __declspec(dllexport) PyCFuncPtrObject *ctypes_dlsym(const wchar_t *dll, const char *name)
{
    HMODULE h = LoadLibraryExW(dll, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!h) return NULL;
    PyCFuncPtrObject *f = (PyCFuncPtrObject *)calloc(1, sizeof(*f));
    f->ob_base.ob_refcnt = 1;
    f->b_ptr = (void *)GetProcAddress(h, name);
    f->name = name;
    return f;
}
