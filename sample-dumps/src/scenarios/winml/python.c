/* python.exe stand-in: the launcher of the CPython stand-in (python312.dll).
 * It installs the in-process crash reporter first (standing in for the crash
 * handler a build tool would install, e.g. faulthandler plus a WER dump), then
 * runs the interpreter exactly as CPython's launcher does: Py_Main. */
#include "../common/dtcommon.h"

__declspec(dllimport) int Py_Main(int argc, wchar_t **argv);

int wmain(int argc, wchar_t **argv)
{
    crashcap_install();
    return Py_Main(argc, argv);
}
