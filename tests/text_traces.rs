//! Stack traces in text (issue 24): each format read through the real
//! binary, in CI noise, several per log, with the answers the same rules
//! give dumps. The traces here are written for these tests in each tool's
//! format; the round trip at the end is gdb's own output on a program of
//! tests/programs/.

use crate::common;
use crate::common::cpu;
use crate::common::text::{analyze_path, analyze_text, answer};

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

/// (file name, trace, expected diagnoses[0], expected format).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "gdb-hip.log",
        "\
2024-05-01T12:00:00.1234567Z ##[group]Run gdb -batch -ex \"thread apply all bt\" -p 4242
2024-05-01T12:00:01.0000000Z Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4243) \"hip_worker\"):
2024-05-01T12:00:01.0000000Z #0  0x00007f0e1c2d3e4f in ioctl () from /lib/x86_64-linux-gnu/libc.so.6
2024-05-01T12:00:01.0000000Z #1  0x00007f0e1c28bac3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
2024-05-01T12:00:01.0000000Z Thread 1 (Thread 0x7f0e1c5e8740 (LWP 4242) \"python3\"):
2024-05-01T12:00:01.0000000Z #0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57
2024-05-01T12:00:01.0000000Z #1  0x00007f0e1a8c2f11 in amd::Monitor::wait() () from /opt/rocm/lib/libamdhip64.so.6
2024-05-01T12:00:01.0000000Z #2  0x00007f0e1a8a1d33 in __hipUnregisterFatBinary () from /opt/rocm/lib/libamdhip64.so.6
2024-05-01T12:00:01.0000000Z #3  0x00007f0e1c23e495 in __run_exit_handlers (status=0, listp=0x7f0e1c3fd838 <__exit_funcs>,
2024-05-01T12:00:01.0000000Z     run_list_atexit=run_list_atexit@entry=true, run_dtors=run_dtors@entry=true) at ./stdlib/exit.c:113
2024-05-01T12:00:01.0000000Z #4  0x00007f0e1c23e610 in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:143
2024-05-01T12:00:01.0000000Z ##[endgroup]
",
        "hip-unregister-fatbinary-hang",
        "gdb",
    ),
    (
        "vs-static-dtor.txt",
        "\
Exception thrown at 0x00007FFB5C2A1F10 (nvoglv64.dll) in llama-cli.exe: 0xC0000005: Access violation reading location 0x0000000000000008.

>\tnvoglv64.dll!00007ffb5c2a1f10()\tUnknown
 \tvulkan-1.dll!vkDestroyDevice()\tUnknown
 \tggml-vulkan.dll!vk::Device::destroy() Line 1102\tC++
 \tggml-vulkan.dll!vk_instance_t::~vk_instance_t() Line 88\tC++
 \tggml-vulkan.dll!`dynamic atexit destructor for 'vk_instance''()\tC++
 \tucrtbase.dll!_execute_onexit_table()\tUnknown
 \tggml-vulkan.dll!dllmain_crt_process_detach(const bool is_terminating) Line 182\tC++
 \tntdll.dll!LdrShutdownProcess()\tUnknown
 \tntdll.dll!RtlExitUserProcess()\tUnknown
",
        "vulkan-teardown-at-exit",
        "visual-studio",
    ),
    (
        "windbg-cudnn.txt",
        "\
(1a2c.1a30): Access violation - code c0000005 (first chance)
0:000> k
 # Child-SP          RetAddr               Call Site
00 000000b5`6d9ff5a0 00007ffa`10042a10     cudnn_ops64_9!cudnnOpsVersionCheck+0x1f2a3
01 000000b5`6d9ff5e0 00007ffa`20011234     cudnn64_9!cudnnDestroy+0x44
02 000000b5`6d9ff620 00007ffa`3001abcd     infer!Model::~Model+0x2a
03 000000b5`6d9ff660 00007ffa`4002dcba     ucrtbase!_execute_onexit_table+0x11c
04 000000b5`6d9ff6a0 00007ffa`4002dd10     ucrtbase!exit+0x2d
",
        "cuda-library-handle-at-exit",
        "windbg",
    ),
    (
        "lldb-ort.txt",
        "\
* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, address=0x10)
  * frame #0: 0x00000001045e2a10 libonnxruntime.1.21.0.dylib`onnxruntime::logging::LoggingManager::DefaultLogger() + 16
    frame #1: 0x00000001045e3b20 libonnxruntime.1.21.0.dylib`OrtEnv::~OrtEnv() + 40
    frame #2: 0x00000001045e3c30 libonnxruntime.1.21.0.dylib`OrtEnv::Release(OrtEnv*) + 20
    frame #3: 0x0000000104a10b40 onnxruntime_binding.node`Ort::detail::Base<OrtEnv>::~Base() + 24
    frame #4: 0x000000018a1f2c50 libsystem_c.dylib`__cxa_finalize_ranges + 416
    frame #5: 0x000000018a1f2d60 libsystem_c.dylib`exit + 44
    frame #6: 0x0000000100e10a70 node`node::Exit(node::ExitCode) + 12
",
        "ort-node-env-late-release",
        "lldb",
    ),
    (
        "pytest-timeout.log",
        "\
+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++
~~~~~~~~~~~~~~~~~~~~~~~~ Stack of MainThread (140245123) ~~~~~~~~~~~~~~~~~~~~~~~~
  File \"/usr/lib/python3.11/threading.py\", line 1583, in _shutdown
    lock.acquire()
~~~~~~~~~~~~~~~~~~~~~~~~ Stack of uploader (140245999) ~~~~~~~~~~~~~~~~~~~~~~~~~
  File \"/usr/lib/python3.11/threading.py\", line 1002, in _bootstrap
    self._bootstrap_inner()
  File \"/app/uploader.py\", line 40, in run
    self.queue.get()
+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++
",
        "python-exit-waits-for-thread",
        "python-traceback",
    ),
    (
        "faulthandler-seed-shape.txt",
        "\
Windows fatal exception: access violation

Thread 0x0000bc98 (most recent call first):
  File \"C:\\Python311\\Lib\\site-packages\\windowsml\\__init__.py\", line 428 in close
  File \"C:\\Python311\\Lib\\site-packages\\windowsml\\__init__.py\", line 439 in __del__
",
        "possibly: winml-epcatalog-release",
        "faulthandler",
    ),
    (
        "backtrace-symbols.log",
        "\
*** Error in `./trainer': double free or corruption (!prev): 0x0000000001c5e010 ***
./trainer(_ZN5Model5trainEv+0x4a)[0x4012fa]
./trainer(main+0x1c)[0x4011cc]
/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xf3)[0x7f0e1c2d3083]
",
        "none",
        "backtrace-symbols",
    ),
    (
        "asan.log",
        "\
==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x4c9f7b bp 0x7ffc sp 0x7ffc
READ of size 8 at 0x602000000010 thread T0
    #0 0x4c9f7b in Registry::~Registry() /src/registry.cc:12:3
    #1 0x7f2a1b2c3d4e in __cxa_finalize (/lib/x86_64-linux-gnu/libc.so.6+0x4a4ee)
    #2 0x4011ab in __do_global_dtors_aux (/app/a.out+0x4011ab)
",
        "crash-in-static-destructor",
        "sanitizer",
    ),
    (
        "rust-panic.log",
        "\
thread 'main' panicked at src/main.rs:10:5:
device lost while training
stack backtrace:
   0: rust_begin_unwind
             at /rustc/abc/library/std/src/panicking.rs:645:5
   1: trainer::train_step
             at ./src/train.rs:88:9
   2: trainer::main
             at ./src/main.rs:10:5
",
        "none",
        "rust",
    ),
    (
        "compute-sanitizer-exit.log",
        "\
========= COMPUTE-SANITIZER
========= Program hit cudaErrorCudartUnloading (error 4) due to \"driver shutting down\" on CUDA API call to cudaFree.
=========     Saved host backtrace up to driver entry point at error
=========     Host Frame: [0x2f1a3c]
=========                in /usr/lib/x86_64-linux-gnu/libcuda.so.1
=========     Host Frame:cudaFree [0x51b2e]
=========                in /opt/app/lib/libcudart.so.12
=========     Host Frame:DevicePool::~DevicePool() in /src/pool.cu:88 [0x1a2b3]
=========                in /opt/app/bin/solver
=========     Host Frame:__run_exit_handlers in ./stdlib/exit.c:113 [0x455f4]
=========                in /lib/x86_64-linux-gnu/libc.so.6
=========     Host Frame:exit in ./stdlib/exit.c:143 [0x45729]
=========                in /lib/x86_64-linux-gnu/libc.so.6
========= ERROR SUMMARY: 1 error
",
        "cuda-runtime-teardown-at-exit",
        "cuda-sanitizer",
    ),
    (
        "compute-sanitizer-work.log",
        "\
========= COMPUTE-SANITIZER
========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaMemcpy.
=========     Saved host backtrace up to driver entry point at error
=========     Host Frame: [0x2f1a3c]
=========                in /usr/lib/x86_64-linux-gnu/libcuda.so.1
=========     Host Frame:cudaMemcpy [0x6c1d2]
=========                in /opt/app/lib/libcudart.so.12
=========     Host Frame:Trainer::step(int) in /src/train.cu:140 [0x2b3c4]
=========                in /opt/app/bin/solver
=========     Host Frame:main in /src/main.cu:12 [0x1f00]
=========                in /opt/app/bin/solver
=========     Host Frame:__libc_start_call_main in ../sysdeps/nptl/libc_start_call_main.h:58 [0x29d90]
=========                in /lib/x86_64-linux-gnu/libc.so.6
========= ERROR SUMMARY: 1 error
",
        "none",
        "cuda-sanitizer",
    ),
    (
        "coredumpctl-info.txt",
        "\
           PID: 4242 (powerctl)
           UID: 1000 (dev)
        Signal: 11 (SEGV)
     Timestamp: Mon 2026-03-02 10:11:12 UTC (1min ago)
  Command Line: /usr/bin/python3 /usr/bin/powerctl
    Executable: /usr/bin/python3.13
       Message: Process 4242 (powerctl) of user 1000 dumped core.

                Module libglib-2.0.so.0 from rpm glib2-2.84.1-1.fc42.x86_64
                Module libpython3.13.so.1.0 from rpm python3-libs-3.13.3-1.fc42.x86_64
                Stack trace of thread 4250:
                #0  0x00007f3a16eaa612 n/a (libpython3.13.so.1.0 + 0x2aa612)
                #1  0x00007f3a16e393ad take_gil (libpython3.13.so.1.0 + 0x2393ad)
                #2  0x00007f3a16f2a66a PyGILState_Ensure (libpython3.13.so.1.0 + 0x32a66a)
                #3  0x00007f3a15c1b0c4 n/a (_gi.cpython-313-x86_64-linux-gnu.so + 0x2b0c4)
                #4  0x00007f3a15a0d2e1 g_main_context_dispatch (libglib-2.0.so.0 + 0x5d2e1)
                #5  0x00007f3a16c8a1f2 start_thread (libc.so.6 + 0x8a1f2)
                
                Stack trace of thread 4242:
                #0  0x00007f3a16c9e3d1 __futex_abstimed_wait_common (libc.so.6 + 0x9e3d1)
                #1  0x00007f3a16d41a20 _dl_fini (ld-linux-x86-64.so.2 + 0x6a20)
                #2  0x00007f3a16c41b75 __run_exit_handlers (libc.so.6 + 0x41b75)
                #3  0x00007f3a16c41c3e exit (libc.so.6 + 0x41c3e)
                ELF object binary architecture: AMD x86-64
",
        "python-thread-after-finalization",
        "systemd-coredump",
    ),
    (
        "coredumpctl-work.txt",
        "\
        Signal: 11 (SEGV)
       Message: Process 4242 (powerctl) of user 1000 dumped core.

                Stack trace of thread 4250:
                #0  0x00007f3a16eaa612 n/a (libpython3.13.so.1.0 + 0x2aa612)
                #1  0x00007f3a16e393ad take_gil (libpython3.13.so.1.0 + 0x2393ad)
                #2  0x00007f3a16f2a66a PyGILState_Ensure (libpython3.13.so.1.0 + 0x32a66a)
                #3  0x00007f3a15a0d2e1 g_main_context_dispatch (libglib-2.0.so.0 + 0x5d2e1)
                #4  0x00007f3a16c8a1f2 start_thread (libc.so.6 + 0x8a1f2)

                Stack trace of thread 4242:
                #0  0x00007f3a16d1a2b0 __poll (libc.so.6 + 0x11a2b0)
                #1  0x00007f3a15a0e5c4 g_main_loop_run (libglib-2.0.so.0 + 0x5e5c4)
                #2  0x00007f3a16e12345 _PyEval_EvalFrameDefault (libpython3.13.so.1.0 + 0x212345)
                #3  0x00007f3a16e2e9b1 pymain_run_python (libpython3.13.so.1.0 + 0x22e9b1)
                #4  0x00007f3a16e2f0aa Py_RunMain (libpython3.13.so.1.0 + 0x22f0aa)
                #5  0x00007f3a16c2a1ca __libc_start_call_main (libc.so.6 + 0x2a1ca)
",
        "none",
        "systemd-coredump",
    ),
    (
        "gdb-dl-call-fini.txt",
        "\
Program terminated with signal SIGSEGV, Segmentation fault.
#0  0x00007f3a1c2d3e4f in ?? () from /opt/gpu/lib/libgpurt.so.2
#1  0x00007f3a1c2a0b11 in ?? () from /opt/gpu/lib/libgpurt.so.2
#2  0x00007f3a1d9d26aa in _dl_call_fini () from /lib64/ld-linux-x86-64.so.2
",
        "crash-during-exit",
        "gdb",
    ),
    (
        "gdb-dl-init.txt",
        "\
Program terminated with signal SIGSEGV, Segmentation fault.
#0  0x00007f3a1c2d3e4f in ?? () from /opt/gpu/lib/libgpurt.so.2
#1  0x00007f3a1c2a0b11 in ?? () from /opt/gpu/lib/libgpurt.so.2
#2  0x00007f3a1d9d1f2e in call_init () from /lib64/ld-linux-x86-64.so.2
#3  0x00007f3a1d9d2034 in _dl_init () from /lib64/ld-linux-x86-64.so.2
",
        "none",
        "gdb",
    ),
    (
        "vs-exit-process-implementation.txt",
        "\
Exception thrown at 0x00007FFB5C2A1F10 (gpudrv64.dll) in viewer.exe: 0xC0000005: Access violation reading location 0x0000000000000010.
>\tgpudrv64.dll!00007ffb5c2a1f10()\tUnknown
 \tgpudrv64.dll!DllMain(HINSTANCE__ * hinst, unsigned long reason, void * reserved) Line 77\tC++
 \tntdll.dll!00007ffb6f0a9a1d()\tUnknown
 \tntdll.dll!00007ffb6f0d4a21()\tUnknown
 \tkernel32.dll!ExitProcessImplementation()\tUnknown
 \tucrtbase.dll!exit_or_terminate_process()\tUnknown
",
        "crash-during-exit",
        "visual-studio",
    ),
    (
        "gdb-pyo3-after-finalize.txt",
        "\
Thread 3 \"py-callback\" received signal SIGSEGV, Segmentation fault.
Thread 3 (Thread 0x7f0e1a2b3c40 (LWP 4244) \"py-callback\"):
#0  0x00007f0e1c6a2e11 in ?? () from /usr/lib/libpython3.12.so.1.0
#1  0x00007f0e1b1c2a3d in pyo3::gil::GILGuard::acquire () at src/gil.rs:198
#2  0x00007f0e1b1a0c5e in sensor::stream::on_frame () at src/stream.rs:57
#3  0x00007f0e1c28bac3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
Thread 1 (Thread 0x7f0e1c5e8740 (LWP 4242) \"python3\"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57
#1  0x00007f0e1c6f1a20 in Py_FinalizeEx () from /usr/lib/libpython3.12.so.1.0
#2  0x00007f0e1c6f2b10 in Py_RunMain () from /usr/lib/libpython3.12.so.1.0
",
        "python-thread-after-finalization",
        "gdb",
    ),
    (
        "gdb-pyo3-at-work.txt",
        "\
Thread 3 \"py-callback\" received signal SIGSEGV, Segmentation fault.
Thread 3 (Thread 0x7f0e1a2b3c40 (LWP 4244) \"py-callback\"):
#0  0x00007f0e1c6a2e11 in ?? () from /usr/lib/libpython3.12.so.1.0
#1  0x00007f0e1b1c2a3d in pyo3::gil::GILGuard::acquire () at src/gil.rs:198
#2  0x00007f0e1b1a0c5e in sensor::stream::on_frame () at src/stream.rs:57
#3  0x00007f0e1c28bac3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
Thread 1 (Thread 0x7f0e1c5e8740 (LWP 4242) \"python3\"):
#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57
#1  0x00007f0e1c6e0a20 in _PyEval_EvalFrameDefault () from /usr/lib/libpython3.12.so.1.0
#2  0x00007f0e1c6f0b10 in pymain_run_python () from /usr/lib/libpython3.12.so.1.0
#3  0x00007f0e1c6f2b10 in Py_RunMain () from /usr/lib/libpython3.12.so.1.0
",
        "none",
        "gdb",
    ),
    (
        "glog-exit.log",
        "\
F0301 10:11:12.345678  4242 pool.cc:88] Check failed: status == cudaSuccess (4 vs. 0)  driver shutting down
*** Check failure stack trace: ***
    @     0x7f0e1c2d3e4f  google::LogMessage::Fail()
    @     0x7f0e1c2d5a11  google::LogMessageFatal::~LogMessageFatal()
    @     0x7f0e1b1c2a3d  DevicePool::~DevicePool()
    @     0x7f0e1c23e495  __run_exit_handlers
    @     0x7f0e1c23e610  exit
",
        "cuda-runtime-teardown-at-exit",
        "glog",
    ),
    (
        "glog-work.log",
        "\
F0301 10:11:12.345678  4242 math.cu:81] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access was encountered
*** Check failure stack trace: ***
    @     0x7f0e1c2d3e4f  google::LogMessage::Fail()
    @     0x7f0e1c2d5a11  google::LogMessageFatal::~LogMessageFatal()
    @     0x7f0e1b1c2a3d  Net::Forward()
    @     0x7f0e1b1a0c5e  Solver::Step()
    @     0x7f0e1b1a0111  main
",
        "none",
        "glog",
    ),
    (
        "signal-handler-exit.log",
        "\
Error: signal 11:
./viewer(+0x8ebb)[0x5647584cdebb]
/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3b8995a520]
/opt/gpu/lib/libgpudrv.so.1(+0x2d9367)[0x7f3b86a76367]
./viewer(+0x6697)[0x5647584cb697] ./src/device.c:212
/lib/x86_64-linux-gnu/libc.so.6(__cxa_finalize+0x9a)[0x7f3b8995c5aa]
/lib/x86_64-linux-gnu/libc.so.6(exit+0x20)[0x7f3b8995e610]
",
        "crash-in-static-destructor",
        "backtrace-symbols",
    ),
    (
        "signal-handler-work.log",
        "\
Error: signal 11:
./viewer(+0x8ebb)[0x5647584cdebb]
/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3b8995a520]
/opt/gpu/lib/libgpudrv.so.1(+0x2d9367)[0x7f3b86a76367]
./viewer(+0x6697)[0x5647584cb697] ./src/device.c:212
./viewer(+0x8540)[0x5647584cd540] ./src/main.c:88
./viewer(main+0xcf)[0x5647584cdfd1]
/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xeb)[0x7f3b8993db6b]
",
        "none",
        "backtrace-symbols",
    ),
    // CPython's last full collection (_PyGC_CollectNoFail) runs only while
    // an interpreter is torn down: a paste cut off below it still shows exit.
    (
        "gdb-gc-finalization.txt",
        "\
Program received signal SIGSEGV, Segmentation fault.
0x00005555556b1c2e in visit_decref (op=0x7ffff6a3b0f0, parent=<optimized out>) at Modules/gcmodule.c:444
(gdb) bt
#0  0x00005555556b1c2e in visit_decref (op=0x7ffff6a3b0f0, parent=<optimized out>) at Modules/gcmodule.c:444
#1  0x00005555556a0d11 in list_traverse (o=<optimized out>, visit=0x5555556b1c00 <visit_decref>, arg=0x0) at Objects/listobject.c:2652
#2  0x00005555556b2a40 in subtract_refs (containers=0x555555a0e2c0) at Modules/gcmodule.c:470
#3  deduce_unreachable (base=0x555555a0e2c0, unreachable=0x7fffffffd8e0) at Modules/gcmodule.c:1094
#4  0x00005555556b3e12 in gc_collect_main (tstate=0x555555a1b4f8, generation=2, n_collected=0x0, n_uncollectable=0x0, nofail=1) at Modules/gcmodule.c:1214
#5  0x00005555556b4511 in _PyGC_CollectNoFail (tstate=0x555555a1b4f8) at Modules/gcmodule.c:2171
#6  0x00005555557c0a33 in ?? ()
#7  0x00005555557c1b02 in ?? ()
",
        "python-gc-crash-at-exit",
        "gdb",
    ),
    // The same collection asked for by gc.collect() during the work.
    (
        "gdb-gc-collect-call.txt",
        "\
Program received signal SIGSEGV, Segmentation fault.
0x00005555556b1c2e in visit_decref (op=0x7ffff6a3b0f0, parent=<optimized out>) at Modules/gcmodule.c:444
(gdb) bt
#0  0x00005555556b1c2e in visit_decref (op=0x7ffff6a3b0f0, parent=<optimized out>) at Modules/gcmodule.c:444
#1  0x00005555556a0d11 in list_traverse (o=<optimized out>, visit=0x5555556b1c00 <visit_decref>, arg=0x0) at Objects/listobject.c:2652
#2  0x00005555556b2a40 in subtract_refs (containers=0x555555a0e2c0) at Modules/gcmodule.c:470
#3  deduce_unreachable (base=0x555555a0e2c0, unreachable=0x7fffffffd8e0) at Modules/gcmodule.c:1094
#4  0x00005555556b3e12 in gc_collect_main (tstate=0x555555a1b4f8, generation=2, n_collected=0x0, n_uncollectable=0x0, nofail=1) at Modules/gcmodule.c:1214
#5  0x00005555556b4511 in gc_collect_impl (module=<optimized out>, generation=2) at Modules/gcmodule.c:1468
#6  0x00005555557c0a33 in ?? ()
#7  0x00005555557c1b02 in ?? ()
",
        "none",
        "gdb",
    ),
];

#[test]
fn each_format_gives_the_dumps_answer() {
    let mut failures = Vec::new();
    for (name, text, want, format) in CASES {
        let reports = analyze_text(name, text);
        let Some(report) = reports.first() else {
            failures.push(format!("{name}: no report"));
            continue;
        };
        if report["status"] != "ok" {
            failures.push(format!("{name}: {}", report["error"]));
            continue;
        }
        let got = answer(report);
        if got != *want {
            failures.push(format!("{name}: {got}, want {want}"));
        }
        if report["source"]["kind"] != "text" || report["source"]["format"] != *format {
            failures.push(format!("{name}: source {}", report["source"]));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Several traces in one CI log (two processes crashed), among ordinary
/// output: a report each, named by the file and the line it starts at.
#[test]
fn a_log_with_several_traces_gives_a_report_each() {
    let mut log = String::from("collected 12 items\ntests/test_a.py ....\n");
    log.push_str(CASES[0].1);
    log.push_str("tests/test_b.py ..F\nsome ordinary output\n");
    for i in 0..14 {
        log.push_str(&format!("progress line {i}\n"));
    }
    log.push_str(CASES[2].1);
    let reports = analyze_text("ci.log", &log);
    let answers: Vec<String> = reports.iter().map(answer).collect();
    assert_eq!(
        answers,
        [
            "hip-unregister-fatbinary-hang",
            "cuda-library-handle-at-exit"
        ],
        "{reports:#?}"
    );
    let names: Vec<&str> = reports
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        names[0].ends_with("ci.log:4") && names[1].contains("ci.log:"),
        "{names:?}"
    );
}

/// How many threads a trace is read as: Visual Studio stacks pasted apart
/// with words between are two stacks, one with `[External Code]` inside
/// is one; a debugger's stop frame printed again by `bt` is not a thread
/// of its own, two different headerless stacks are two.
#[test]
fn stacks_pasted_apart_and_stacks_printed_twice() {
    let threads = |name: &str, text: &str| -> Vec<usize> {
        analyze_text(name, text)
            .iter()
            .map(|r| r["threads"].as_array().unwrap().len())
            .collect()
    };
    let vs_two = "\
The driver is detached first:
 \tgpudrv64.dll!dllmain_dispatch(HINSTANCE__ * const instance, const unsigned long reason, void * const reserved) Line 281\tC++
 \tntdll.dll!LdrShutdownProcess()\tUnknown
 \tntdll.dll!RtlExitUserProcess()\tUnknown
then our static destructor runs:
 \trender.dll!`dynamic atexit destructor for 'g_device''()\tC++
 \tucrtbase.dll!_execute_onexit_table()\tUnknown
";
    assert_eq!(threads("vs-two.txt", vs_two), [2]);
    let vs_one = "\
 \trender.dll!Device::~Device() Line 40\tC++
 \t[External Code]\t
 \tucrtbase.dll!_execute_onexit_table()\tUnknown
";
    assert_eq!(threads("vs-one.txt", vs_one), [1]);
    let gdb_again = "\
#0  0x00007f0e1c2d3e4f in ?? () from /lib/x86_64-linux-gnu/libc.so.6
(gdb) bt
#0  0x00007f0e1c2d3e4f in ?? () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f0e1a8c2f11 in Pool::drain() () from /opt/app/lib/libpool.so
#2  0x00007f0e1c23e495 in __run_exit_handlers () from /lib/x86_64-linux-gnu/libc.so.6
";
    assert_eq!(threads("gdb-again.txt", gdb_again), [1]);
    let gdb_two = "\
#0  0x00007f0e1c2d3e4f in ?? () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f0e1a8c2f11 in Pool::worker() () from /opt/app/lib/libpool.so
(gdb) thread 1
(gdb) bt
#0  0x00007f0e1c2d3e4f in ?? () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f0e1a8c2f11 in Pool::drain() () from /opt/app/lib/libpool.so
#2  0x00007f0e1c23e495 in __run_exit_handlers () from /lib/x86_64-linux-gnu/libc.so.6
";
    assert_eq!(threads("gdb-two.txt", gdb_two), [2]);
}

/// gdb lists threads from the highest number down and names the crashing
/// one by its own number (`Thread 2 "worker" received signal`, or on a
/// core `[Current thread is 2 (...)]`), not by the LWP its headers show:
/// the crash is that thread's, wherever it is listed.
#[test]
fn the_crashing_thread_is_the_one_gdb_names() {
    let threads = "\
Thread 3 (Thread 0x7ffff6dfe6c0 (LWP 18300) \"idle\"):
#0  0x00007ffff7d2e2b6 in __futex_abstimed_wait_common () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007ffff7d331f5 in start_thread () from /lib/x86_64-linux-gnu/libc.so.6

Thread 2 (Thread 0x7ffff75ff6c0 (LWP 18299) \"worker\"):
#0  0x00007ffff79e727f in Pool::release () from /opt/app/lib/libpool.so
#1  0x00007ffff7d331f5 in start_thread () from /lib/x86_64-linux-gnu/libc.so.6

Thread 1 (Thread 0x7ffff7ca9040 (LWP 18296) \"app\"):
#0  0x00007ffff7d35c11 in __pthread_clockjoin_ex () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00005555555551a0 in main ()
";
    let crashed = |name: &str, before: &str| -> u64 {
        let reports = analyze_text(name, &format!("{before}{threads}"));
        // The stop frame gdb printed first is not a fourth thread.
        assert_eq!(reports[0]["threads"].as_array().unwrap().len(), 3, "{name}");
        reports[0]["exception"]["thread_id"].as_u64().unwrap()
    };
    let live = "Thread 2 \"worker\" received signal SIGSEGV, Segmentation fault.\n\
                [Switching to Thread 0x7ffff75ff6c0 (LWP 18299)]\n(gdb) thread apply all bt\n\n";
    assert_eq!(crashed("live.txt", live), 18299);
    let core = "Program terminated with signal SIGSEGV, Segmentation fault.\n\
                #0  0x00007ffff79e727f in Pool::release () from /opt/app/lib/libpool.so\n\
                [Current thread is 2 (Thread 0x7ffff75ff6c0 (LWP 18299))]\n(gdb) thread apply all bt\n\n";
    assert_eq!(crashed("core.txt", core), 18299);
    // Named by nothing: the first thread listed, as before.
    let unnamed = "Program terminated with signal SIGSEGV, Segmentation fault.\n";
    assert_eq!(crashed("unnamed.txt", unnamed), 18300);
}

/// gdb's `bt full`: however many locals a frame has, the frames below it
/// are the same trace; an ordinary log line after the trace still ends it.
#[test]
fn gdb_bt_full_locals_stay_in_the_trace() {
    let mut text = String::from(
        "Program received signal SIGSEGV, Segmentation fault.\n\
         #0  0x00007ffff79e727f in Pool::release (this=0x0) at pool.cc:40\n",
    );
    for i in 0..30 {
        text.push_str(&format!(
            "        slot{i} = {{\n          used = {i},\n        }}\n"
        ));
    }
    text.push_str(
        "#1  0x00007ffff79e72cf in Pool::~Pool (this=0x555555559eb0) at pool.cc:52\n\
         \x20       No locals.\n\
         #2  0x00007ffff7c45495 in __run_exit_handlers (status=0) at ./stdlib/exit.c:113\n\
         #3  0x00007ffff7c45610 in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:143\n",
    );
    let reports = analyze_text("bt-full.txt", &text);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(answer(&reports[0]), "crash-in-static-destructor");
    // Not part of it: log lines that are not locals end the trace as before.
    let mut two = text.clone();
    for i in 0..20 {
        two.push_str(&format!("build step {i} done\n"));
    }
    two.push_str("#0  0x00007ffff79e727f in Other::run () at other.cc:9\n");
    assert_eq!(analyze_text("two.txt", &two).len(), 2);
}

/// A text with no trace, binary junk and a 100 MB line: one clear line
/// each, status 2, and the other inputs are read.
#[test]
fn bad_text_is_one_clear_error_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "just some notes\nnothing to see\n").unwrap();
    let junk = dir.path().join("junk.bin");
    std::fs::write(
        &junk,
        (0..4096u32)
            .map(|i| (i * 7 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let long = dir.path().join("long.log");
    let mut file = std::fs::File::create(&long).unwrap();
    let line = vec![b'x'; 100 << 20];
    file.write_all(&line).unwrap();
    file.write_all(b"\n").unwrap();
    file.write_all(CASES[0].1.as_bytes()).unwrap();
    drop(file);
    let out = common::bin()
        .args(["analyze", "--format", "json"])
        .args([&notes, &junk, &long])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 3, "{reports:#?}");
    let error = reports[0]["error"].as_str().unwrap();
    assert!(error.contains("no stack trace found"), "{error}");
    assert_eq!(reports[0]["error_kind"], "not_minidump");
    assert!(reports[1]["error"]
        .as_str()
        .unwrap()
        .contains("not a minidump"));
    assert_eq!(answer(&reports[2]), "hip-unregister-fatbinary-hang");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().all(|l| !l.contains("panicked")), "{stderr}");
}

/// `-` reads standard input.
#[test]
fn standard_input_is_read_with_a_dash() {
    let mut child = common::bin()
        .args(["analyze", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(CASES[2].1.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &doc["reports"][0];
    assert!(report["path"].as_str().unwrap().starts_with("<stdin>"));
    assert_eq!(answer(report), "cuda-library-handle-at-exit");
}

/// Folders give their logs only with --text.
#[test]
fn folders_are_searched_for_logs_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.log"), CASES[0].1).unwrap();
    let count = |extra: &[&str]| {
        let out = common::bin()
            .args(["analyze", "--format", "json"])
            .args(extra)
            .arg(dir.path())
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["reports"].as_array().unwrap().len()
    };
    assert_eq!(count(&[]), 0);
    assert_eq!(count(&["--text"]), 1);
}

/// A big CI log costs in proportion to its size: 50 MB of build output
/// before the trace costs no more than 20 times what 5 MB does (10 times
/// for a linear reader, plus the fixed cost of a run), in CPU time measured
/// in this test. How fast it is, against other tools, is
/// scripts/bench-text.sh's to say; a reader that went back over the lines
/// it had read would cost about 100 times.
#[test]
fn a_big_log_costs_in_proportion_to_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let log = |megabytes: usize| {
        let path = dir.path().join(format!("big-{megabytes}.log"));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut written = 0;
        let mut i = 0u64;
        while written < megabytes << 20 {
            let line = format!(
                "2024-05-01T12:00:00.1234567Z [{i}] compiling crate_{i} v0.1.0 (/build/src/crate_{i}) with --opt-level=3\n"
            );
            written += line.len();
            file.write_all(line.as_bytes()).unwrap();
            i += 1;
        }
        file.write_all(CASES[2].1.as_bytes()).unwrap();
        drop(file);
        let (out, cpu) = cpu::run(
            common::bin()
                .args(["analyze", "--format", "json"])
                .arg(&path),
        );
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(
            answer(&doc["reports"][0]),
            "cuda-library-handle-at-exit",
            "{megabytes} MB"
        );
        cpu
    };
    let small = log(5);
    let big = log(50);
    eprintln!("5 MB: {small:?} of CPU, 50 MB: {big:?}");
    assert!(big <= small * 20, "5 MB: {small:?}, 50 MB: {big:?}");
}

/// gdb's `thread apply all bt` at the crash of `command` run under it.
#[cfg(target_os = "linux")]
fn gdb_at_crash(command: &[std::path::PathBuf], bin: &Path) -> Vec<u8> {
    std::process::Command::new("gdb")
        .args([
            "-q",
            "-batch",
            "-nx",
            "-ex",
            "run",
            "-ex",
            "thread apply all bt",
            "--args",
        ])
        .args(command)
        .current_dir(bin)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .stdout
}

/// gdb's `thread apply all bt` attached to `program` of `bin` once it
/// hangs; the program is killed after.
#[cfg(target_os = "linux")]
fn gdb_at_hang(bin: &Path, program: &str) -> Vec<u8> {
    let mut child = std::process::Command::new(bin.join(program))
        .current_dir(bin)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Each program announces nothing: it has reached its hang when
    // every thread of it sleeps.
    common::wait_until_asleep(child.id(), 0);
    let out = std::process::Command::new("gdb")
        .args(["-q", "-batch", "-nx", "-p"])
        .arg(child.id().to_string())
        .args(["-ex", "thread apply all bt"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    out.stdout
}

/// Every Linux sample's failure rendered by gdb (`thread apply all bt`: at
/// the crash under `run`, attached to the hang) gives the dump's own
/// diagnosis and crash signature (issue 40): the same programs (sample-dumps/linux/bin), the same rules.
/// python-thread-after-finalization runs this machine's python3 with the
/// sample's extension, as its dump did (Debian 12's python3.11, which is
/// linked statically: gdb names no Python library).
#[cfg(target_os = "linux")]
#[test]
fn gdb_renderings_of_the_linux_samples_give_the_dumps_diagnosis() {
    if std::process::Command::new("gdb")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip::skip(
            "text_traces::gdb_round_trips",
            "gdb is not installed (scripts/ci-setup-linux.sh installs it)",
        );
        return;
    }
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps/linux");
    let bin = linux.join("bin");
    let dir = tempfile::tempdir().unwrap();
    // gdb's text of `program` against the dump of `sample`: the same
    // diagnosis and the same crash signature (issue 40).
    let mut differ = Vec::new();
    let mut compare = |program: &str, sample: &str, gdb: &[u8], failures: &mut Vec<String>| {
        let text = String::from_utf8_lossy(gdb).into_owned();
        let path = dir.path().join(format!("{program}.gdb.txt"));
        std::fs::write(&path, &text).unwrap();
        let report = analyze_path(&path).first().cloned().unwrap_or_default();
        let got = answer(&report);
        let dump = analyze_path(&linux.join(format!("{sample}-linux.dmp")));
        let want = answer(&dump[0]);
        if got != want {
            failures.push(format!("{program}: gdb text {got}, dump {want}\n{text}"));
        }
        let (got, want) = (&report["crash_signature"], &dump[0]["crash_signature"]);
        if got != want {
            differ.push(format!("{program}: gdb text {got}, dump {want}"));
        }
    };
    let mut failures = Vec::new();
    let python = Path::new("/usr/bin/python3");
    let python_ok = std::process::Command::new(python)
        .args(["-c", "import sys; assert sys.version_info[:2] == (3, 11)"])
        .status()
        .is_ok_and(|s| s.success());
    if !python_ok {
        common::skip::skip(
            "text_traces::gdb_python_round_trip",
            "/usr/bin/python3 is not Debian 12's python3.11, which pyfinal_ext.so is built for",
        );
    }
    let mut crashes: Vec<(&str, &str, Vec<std::path::PathBuf>)> = [
        ("cuda_exit_crash", "cuda-runtime-teardown-at-exit"),
        ("tls_exit_crash", "tls-destructor-crash-at-exit"),
        ("unload_crash", "crash-at-exit-after-dlclose"),
        ("static_dtor_throw", "abort-during-exit"),
    ]
    .into_iter()
    .map(|(program, sample)| (program, sample, vec![bin.join(program)]))
    .collect();
    if python_ok {
        crashes.push((
            "pyfinal_ext",
            "python-thread-after-finalization",
            vec![python.into(), "-c".into(), "import pyfinal_ext".into()],
        ));
    }
    for (program, sample, command) in crashes {
        compare(
            program,
            sample,
            &gdb_at_crash(&command, &bin),
            &mut failures,
        );
    }
    for (program, sample) in [
        ("hip_exit_hang", "hip-unregister-fatbinary-hang"),
        ("tls_exit_hang", "tls-teardown-hang-at-exit"),
        ("dlopen_exit_hang", "glibc-loader-lock-at-exit"),
        ("python3", "python-exit-waits-for-thread"),
    ] {
        compare(program, sample, &gdb_at_hang(&bin, program), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Each signature difference must be listed, and each listed one must
    // still happen (so the list shrinks when the reader learns more).
    for d in &differ {
        assert!(
            GDB_SIGNATURE_DIFFERENCES
                .iter()
                .any(|(program, _)| d.starts_with(&format!("{program}:"))),
            "the crash signature differs: {d}"
        );
    }
    for (program, why) in GDB_SIGNATURE_DIFFERENCES {
        if *program == "pyfinal_ext" && !python_ok {
            continue;
        }
        assert!(
            differ.iter().any(|d| d.starts_with(&format!("{program}:"))),
            "{program}'s gdb text now gives the dump's crash signature ({why}): remove it \
             from GDB_SIGNATURE_DIFFERENCES"
        );
    }
}

/// Where a gdb rendering's crash signature differs from its dump's, and why:
/// (program, reason).
const GDB_SIGNATURE_DIFFERENCES: &[(&str, &str)] = &[(
    "pyfinal_ext",
    "the text reader leaves gdb's frames `in (anonymous namespace)::deliver_result () at ...` \
     unnamed (the parenthesis of the namespace), so only glibc's abort frames are named",
)];

/// A WinDbg `~*k` rendering of a report: the exception line, then each
/// thread's header and frames as WinDbg prints them (modules by name
/// without their extension, `module!function+0xoffset`).
fn windbg_text(report: &Value) -> String {
    windbg_text_of(report, |_, _| true)
}

/// As [`windbg_text`], with the frames `shown(thread frames, index)` keeps.
fn windbg_text_of(report: &Value, shown: impl Fn(&[Value], usize) -> bool) -> String {
    let mut text = String::new();
    let crashing = report["exception"]["crash"] == true;
    if crashing {
        let code = report["exception"]["code"].as_str().unwrap_or("0x0");
        text.push_str(&format!(
            "(1a2c.1a30): Exception - code {} (first chance)\n",
            code.trim_start_matches("0x")
        ));
    }
    for (n, thread) in report["threads"].as_array().unwrap().iter().enumerate() {
        let current = if thread["crashing"] == true { "." } else { " " };
        let id = thread["id"].as_u64().unwrap();
        text.push_str(&format!(
            "{current}{n:3}  Id: 1a2c.{id:x} Suspend: 0 Teb: 00000000`00000000 Unfrozen\n"
        ));
        text.push_str(" # Child-SP          RetAddr               Call Site\n");
        let frames = thread["frames"].as_array().unwrap();
        for (i, frame) in frames.iter().enumerate().filter(|(i, _)| shown(frames, *i)) {
            let module = frame["module"]
                .as_str()
                .map(|m| m.rsplit_once('.').map_or(m, |(stem, _)| stem).to_string());
            let site = match (module, frame["function"].as_str()) {
                (Some(m), Some(f)) => {
                    let f = f
                        .split('(')
                        .next()
                        .filter(|_| !f.starts_with('`'))
                        .unwrap_or(f);
                    let offset = frame["function_offset"].as_str().unwrap_or("0x0");
                    format!("{m}!{f}+{offset}")
                }
                (Some(m), None) => {
                    format!("{m}+{}", frame["module_offset"].as_str().unwrap_or("0x0"))
                }
                _ => frame["instruction"].as_str().unwrap_or("0x0").to_string(),
            };
            text.push_str(&format!(
                "{i:02x} 00000000`00000000 00000000`00000000     {site}\n"
            ));
        }
        text.push('\n');
    }
    text
}

/// The Windows samples whose WinDbg rendering gives another diagnosis: what
/// only a dump can show; text keeps the frames. Every other sample must
/// agree.
const ALLOWED_DIFFERENCES: &[&str] = &[
    // The unloaded-module list and the faulting data address in it.
    "dxc-after-unload:",
    // The logger's frames are found in stack memory (stack search).
    "ort-logger-after-teardown:",
    // Exit is inferred from unnamed C runtime frames under the CRT's
    // start-up routine, which takes the dump's symbol sources and the
    // walker's scan marks: neither is in text.
    "pal-fence-wait-at-exit:",
    "hip-dllmain-detach-hang:",
    "loader-lock-deadlock-at-exit:",
    "critical-section-owner-gone-at-exit:",
    // The same inference decides that the plugin's DllMain runs at
    // detach, not attach.
    "dllmain-waits-for-thread-at-exit:",
];

/// The Windows samples rendered as WinDbg `~*k` text give the dumps'
/// diagnoses where the frames carry the evidence (a rule that needs what
/// only a dump has, such as unloaded modules or the faulting data
/// address, is listed with what text gets instead), and the dumps' crash
/// signatures (issue 40).
#[test]
fn windbg_renderings_of_the_windows_samples_give_the_dumps_diagnosis() {
    let dumps = common::dumps_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps"));
    assert!(dumps.len() >= 20, "{dumps:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut same = 0;
    let mut differ = Vec::new();
    let mut signatures = Vec::new();
    for dump in &dumps {
        let report = &analyze_path(dump)[0];
        let want = answer(report);
        let name = dump.file_stem().unwrap().to_string_lossy().into_owned();
        let path = dir.path().join(format!("{name}.windbg.txt"));
        std::fs::write(&path, windbg_text(report)).unwrap();
        let text = analyze_path(&path).first().cloned().unwrap_or_default();
        let got = answer(&text);
        if got == want {
            same += 1;
        } else {
            differ.push(format!("{name}: text {got}, dump {want}"));
        }
        // The crash signature too (issue 40), from what WinDbg's own walk
        // prints: it follows unwind data and does not scan stacks, so the
        // frames ours found by scanning are left out (but for the caller of
        // code in no module, which only a scan finds; WinDbg shows it from
        // the return address the call left).
        let walked = |frames: &[Value], i: usize| {
            let scanned = |f: &Value| f["trust"] == "scan" || f["trust"] == "cfi_scan";
            let into_nothing =
                i == 1 && frames[0]["module"].is_null() && frames[0]["function"].is_null();
            !scanned(&frames[i]) || into_nothing
        };
        let path = dir.path().join(format!("{name}.walked.windbg.txt"));
        std::fs::write(&path, windbg_text_of(report, walked)).unwrap();
        let text = analyze_path(&path).first().cloned().unwrap_or_default();
        // A hang whose exit only the dump establishes (see `allowed`
        // below) is no established failure in text: none, or a possible
        // one (a quit path's name suggests exit), whose signature names the
        // program's module as WinDbg prints it, without its extension.
        let possible_only = text["diagnoses"]
            .as_array()
            .is_some_and(|d| d.iter().all(|d| d["possible"].is_string()));
        let no_failure = possible_only && text["exception"]["crash"] != true;
        if text["crash_signature"] != report["crash_signature"]
            && !(no_failure
                && ALLOWED_DIFFERENCES
                    .iter()
                    .any(|a| a.starts_with(&format!("{name}:"))))
        {
            signatures.push(format!(
                "{name}: text {}, dump {}",
                text["crash_signature"], report["crash_signature"]
            ));
        }
    }
    assert!(signatures.is_empty(), "{signatures:#?}");
    let unexpected: Vec<&String> = differ
        .iter()
        .filter(|d| !ALLOWED_DIFFERENCES.iter().any(|a| d.starts_with(a)))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{same} of {} agree; differ: {differ:#?}",
        dumps.len()
    );
}

/// py-spy's own dumps (with and without `--native`) of a Python program
/// hung at exit on a non-daemon thread give python-exit-waits-for-thread.
#[cfg(target_os = "linux")]
#[test]
fn py_spy_dumps_of_a_python_exit_hang() {
    if std::process::Command::new("py-spy")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip::skip(
            "text_traces::py_spy",
            "py-spy is not installed (scripts/ci-setup-linux.sh installs it from PyPI)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hang_at_exit.py");
    std::fs::write(
        &script,
        "import threading, time\n\
         def upload():\n    while True:\n        time.sleep(1)\n\
         threading.Thread(target=upload, name='uploader').start()\n\
         print('work done', flush=True)\n",
    )
    .unwrap();
    let mut python = std::process::Command::new("python3")
        .arg(&script)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the script's last line: main is then in threading._shutdown.
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(python.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    common::wait_until_asleep(python.id(), 0);
    let mut failures = Vec::new();
    for extra in [&[][..], &["--native"][..]] {
        let out = std::process::Command::new("py-spy")
            .arg("dump")
            .args(extra)
            .args(["--pid", &python.id().to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let reports = analyze_text("py-spy.txt", &text);
        let got = reports.first().map(answer).unwrap_or_default();
        if got != "python-exit-waits-for-thread" {
            failures.push(format!("py-spy dump {extra:?}: {got}\n{text}"));
        }
    }
    let _ = python.kill();
    let _ = python.wait();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// WinDbg marks the thread of the last event (the exception) with `#` and
/// the current one with `.`: after `~0s` they differ, and the crash is the
/// `#` thread's. Without a `#`, the `.` thread is the one.
#[test]
fn windbg_last_event_thread_is_the_crashing_one() {
    let threads = |main_mark: char, worker_mark: char| {
        format!(
            "\
(2f10.2f40): Access violation - code c0000005 (first chance)
{main_mark}  0  Id: 2f10.2f14 Suspend: 1 Teb: 00000000`00351000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000`0014f6b8 00007ffb`6f0b3c1e     ntdll!NtWaitForSingleObject+0x14
01 00000000`0014f6c0 00007ff6`1a2b1044     KERNELBASE!WaitForSingleObjectEx+0x8e
02 00000000`0014f760 00007ff6`1a2b12f0     render!main+0x44
{worker_mark}  2  Id: 2f10.2f40 Suspend: 1 Teb: 00000000`00355000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000`0244f8a8 00007ffb`5c2a2210     gpudrv64!Device::Release+0x10
01 00000000`0244f8b0 00007ffb`5c2a3001     gpudrv64!worker_loop+0x60
02 00000000`0244f900 00007ffb`6e1d7614     KERNEL32!BaseThreadInitThunk+0x14
"
        )
    };
    let crashing = |text: &str| -> Vec<u64> {
        let report = &analyze_text("windbg-marks.txt", text)[0];
        report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["crashing"] == true)
            .map(|t| t["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(crashing(&threads('.', '#')), vec![0x2f40]);
    assert_eq!(crashing(&threads('#', ' ')), vec![0x2f14]);
    assert_eq!(crashing(&threads('.', ' ')), vec![0x2f14]);
}

/// Held-back traces from public issues (issue 24's second evaluation)
/// showed these shapes; the texts here are written for the test.
/// Exit-time Python code (concurrent.futures' exit function) joining a
/// worker is the exit-time wait; the same join from the program's own code
/// is not.
#[test]
fn an_exit_function_joining_a_thread_is_the_exit_wait() {
    let traceback = |caller: &str| {
        format!(
            "\
Error in atexit._run_exitfuncs:
Traceback (most recent call last):
  File \"/usr/lib/python3.12/concurrent/futures/thread.py\", line 31, in {caller}
    t.join()
  File \"/usr/lib/python3.12/threading.py\", line 1147, in join
    self._wait_for_tstate_lock()
  File \"/usr/lib/python3.12/threading.py\", line 1167, in _wait_for_tstate_lock
    if lock.acquire(block, timeout):
KeyboardInterrupt
"
        )
    };
    let got = answer(&analyze_text("atexit.txt", &traceback("_python_exit"))[0]);
    assert_eq!(got, "python-exit-waits-for-thread");
    let got = answer(&analyze_text("join.txt", &traceback("drain_pool"))[0]);
    assert_eq!(got, "none");
}

/// Rust's "cannot access a Thread Local Storage value during or after
/// destruction" on the main thread: the main thread's thread-locals die only
/// at process exit. The same panic on another thread says nothing of exit.
/// A test runner's `stderr: ` label on each line is noise.
#[test]
fn a_main_thread_tls_panic_is_at_exit() {
    let panic = |thread: &str| {
        format!(
            "\
stderr: thread '{thread}' panicked at library/std/src/thread/local.rs:276:25:
stderr: cannot access a Thread Local Storage value during or after destruction: AccessError
stderr: stack backtrace:
stderr:    0:     0x55d0c1a2e48e - std::panicking::begin_panic_handler
stderr:    1:     0x55d0c1a2f1c3 - core::panicking::panic_fmt
stderr:    2:     0x55d0c1a30fe9 - core::result::unwrap_failed
stderr:    3:     0x55d0c1a31333 - render_queue::Registry::unregister
stderr:    4:     0x55d0c1a32aed - <render_queue::Worker as core::ops::drop::Drop>::drop
"
        )
    };
    let report = &analyze_text("tls.log", &panic("main"))[0];
    // (Rust's own words name the thread-local teardown: the specific rule.)
    assert_eq!(answer(report), "tls-destructor-crash-at-exit", "{report:#}");
    assert_eq!(report["source"]["format"], "rust");
    let report = &analyze_text("tls-worker.log", &panic("upload-worker"))[0];
    assert_eq!(answer(report), "none");
    // The older message, on the panic's own line.
    let old = "\
thread 'main' panicked at 'cannot access a TLS value during or after it is destroyed: AccessError', libcore/result.rs:945:5
stack backtrace:
   0: std::panicking::rust_panic_with_hook
             at libstd/panicking.rs:511
   1: render_queue::Registry::unregister
";
    assert_eq!(
        answer(&analyze_text("tls-old.log", old)[0]),
        "tls-destructor-crash-at-exit"
    );
}

/// A Rust backtrace pasted from its middle (no `stack backtrace:` line, no
/// panic message) is read from its first `N: 0x... - NAME` frame, and its
/// panic entry points say it panicked. Numbered prose is no trace.
#[test]
fn a_rust_backtrace_pasted_from_its_middle() {
    let text = "\
  13:     0x7ff6b78e2639 - std::panicking::begin_panic_handler
                               at /rustc/0123456789abcdef\\library\\std\\src\\panicking.rs:584
  14:     0x7ff6b78f6c75 - core::panicking::panic_no_unwind
  15:     0x7ff6b77ba096 - std::thread::local::fast::destroy_value<render_queue::Cache>
  16:     0x7ff6b78e5099 - std::sys::windows::thread_local_dtor::run_keyless_dtors
";
    let report = &analyze_text("middle.txt", text)[0];
    assert_eq!(report["source"]["format"], "rust", "{report:#}");
    let frames = report["threads"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    assert_eq!(
        frames[0]["file"],
        "/rustc/0123456789abcdef\\library\\std\\src\\panicking.rs"
    );
    assert!(
        report["exception"].to_string().contains("panic"),
        "{}",
        report["exception"]
    );
    let out = common::bin()
        .arg("analyze")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    out.stdin
        .as_ref()
        .unwrap()
        .write_all(
            b"Steps:\n  1: open the viewer - then close it\n  2: 0x10 is the flag - set it\n",
        )
        .unwrap();
    let out = out.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A crash handler that numbers glibc's `backtrace_symbols` lines and puts
/// a space before the address: each line is still a frame with its module.
#[test]
fn numbered_backtrace_symbols_lines() {
    let text = "\
Caught signal 11
0       /opt/app/lib/libplugin.so(+0xfc7c) [0x7f2612ae6c7c]
1       /lib/x86_64-linux-gnu/libc.so.6(+0x3c050) [0x7f2613541050]
2       /opt/app/lib/libplugin.so(plugin_init+0x348) [0x7f2612ae7e66]
3       /opt/app/bin/host(+0x10cf7) [0x55bc72fd4cf7]
";
    let report = &analyze_text("numbered.log", text)[0];
    assert_eq!(
        report["source"]["format"], "backtrace-symbols",
        "{report:#}"
    );
    let frames = report["threads"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    assert_eq!(frames[0]["module"], "libplugin.so");
    assert_eq!(frames[2]["function"], "plugin_init");
    assert_eq!(answer(report), "none");
}

/// A trace pasted as a Markdown code block indented by 4 spaces (or a fence
/// in a list item): the shared indentation goes, so gdb's frames and a
/// sanitizer's first line read as their tool printed them. A sanitizer's
/// frames alone, their report's head cut off, stay sanitizer frames.
#[test]
fn markdown_indented_blocks_read_as_printed() {
    let gdb = "\
Steps: run the viewer and close it.

     Program terminated with signal SIGSEGV, Segmentation fault.
     #0  0x00007f3b86a76367 in gpu_context_release () from /opt/gpu/lib/libgpudrv.so.1
     #1  0x00005647584cb697 in Viewer::~Viewer (this=0x5647585d2eb0) at src/viewer.cc:88
     #2  0x00007f3b8995c5aa in __cxa_finalize (d=0x5647584d0008) at ./stdlib/cxa_finalize.c:83
     #3  0x00007f3b8995e610 in __run_exit_handlers (status=0) at ./stdlib/exit.c:116
";
    let report = &analyze_text("indented-gdb.md", gdb)[0];
    assert_eq!(report["source"]["format"], "gdb", "{report:#}");
    assert_eq!(answer(report), "crash-in-static-destructor");
    let asan = "
    ==4242==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010 (pc 0x55d0c1a2e48e bp 0x7ffd3a1c0a10 sp 0x7ffd3a1c09f0 T0)
        #0 0x55d0c1a2e48e in Registry::lookup(char const*) src/registry.cc:41
        #1 0x55d0c1a2f1c3 in load_plugins src/plugins.cc:120
        #2 0x55d0c1a30fe9 in main src/main.cc:12
";
    let report = &analyze_text("indented-asan.md", asan)[0];
    assert_eq!(report["source"]["format"], "sanitizer", "{report:#}");
    assert!(
        report["exception"].to_string().contains("SIGSEGV"),
        "{}",
        report["exception"]
    );
    let frames_alone = "
    #0 0x55d0c1a2e48e in Registry::lookup(char const*) (/opt/app/bin/app+0x2e48e)
    #1 0x55d0c1a2f1c3 in load_plugins (/opt/app/bin/app+0x2f1c3)
";
    let report = &analyze_text("frames-alone.md", frames_alone)[0];
    assert_eq!(report["source"]["format"], "sanitizer", "{report:#}");
    assert_eq!(report["threads"][0]["frames"][1]["module"], "app");
}

/// Ctrl-C in gdb on a hung program (`Program received signal SIGINT`)
/// names no crash: the stack is the hang's. A real signal is a crash.
#[test]
fn gdb_interrupted_by_the_user_is_a_hang() {
    let trace = |signal: &str| {
        format!(
            "\
^C
Program received signal {signal}, Interrupt.
0x00007f0e1c2d3e4f in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6
(gdb) bt
#0  0x00007f0e1c2d3e4f in __futex_abstimed_wait_common64 () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f0e1a8c2f11 in amd::Monitor::wait() () from /opt/rocm/lib/libamdhip64.so.6
#2  0x00007f0e1a8a1d33 in __hipUnregisterFatBinary () from /opt/rocm/lib/libamdhip64.so.6
#3  0x00007f0e1c23e495 in __run_exit_handlers (status=0) at ./stdlib/exit.c:113
#4  0x00007f0e1c23e610 in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:143
"
        )
    };
    let report = &analyze_text("interrupted.txt", &trace("SIGINT"))[0];
    assert_eq!(
        answer(report),
        "hip-unregister-fatbinary-hang",
        "{report:#}"
    );
    let report = &analyze_text("segv.txt", &trace("SIGSEGV"))[0];
    assert_ne!(answer(report), "hip-unregister-fatbinary-hang");
    assert!(report["exception"].to_string().contains("SIGSEGV"));
}

/// A stack dumped by a watchdog or a hang dumper (#37): the dumper's own
/// frames on top (its signal handler, `raise`) and the abort that ends the
/// dump are no crash when the text says the dump is of a hang or a
/// timeout: the hang under them is the answer. faulthandler's
/// `dump_traceback_later` banner says the same. The same frames under an
/// assertion's message, with no such words, stay an abort.
#[test]
fn a_hang_dumper_s_own_abort_is_no_crash() {
    let stack = |header: &str, handler: &str| {
        format!(
            "\
[  PASSED  ] 12 tests.
{header}
./pool_tests(_ZN8watchdog10dump_stackEv+0x2e)[0x55d0c0a1b2ee]
/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f6e1c642520]
/lib/x86_64-linux-gnu/libc.so.6(pthread_kill+0x12c)[0x7f6e1c6969fc]
/lib/x86_64-linux-gnu/libc.so.6(raise+0x16)[0x7f6e1c642476]
{handler}
/lib/x86_64-linux-gnu/libc.so.6(__pthread_clockjoin_ex+0x106)[0x7f6e1c696c86]
./pool_tests(_ZN4Pool4stopEv+0x51)[0x55d0c0a1c111]
./pool_tests(_ZN4PoolD1Ev+0x1a)[0x55d0c0a1c20a]
/lib/x86_64-linux-gnu/libc.so.6(+0x45495)[0x7f6e1c645495]
/lib/x86_64-linux-gnu/libc.so.6(exit+0x20)[0x7f6e1c645610]
/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x80)[0x7f6e1c629e40]
Aborted (core dumped)
"
        )
    };
    let unnamed = "/lib/x86_64-linux-gnu/libc.so.6(+0x91117)[0x7f6e1c691117]";
    let report = &analyze_text(
        "watchdog.txt",
        &stack(
            "watchdog: timeout after 300 s, the process is hung; dumping the main thread's stack:",
            unnamed,
        ),
    )[0];
    assert_eq!(answer(report), "hang-during-exit", "{report:#}");
    assert!(report["exception"].is_null(), "{report:#}");
    assert!(
        report["warnings"].to_string().contains("dumped for a hang"),
        "{report:#}"
    );

    // A real abort: an assertion, and abort() under raise.
    let report = &analyze_text(
        "assert.txt",
        &stack(
            "pool_tests: pool.cc:51: void Pool::stop(): Assertion `workers_.empty()' failed.",
            "/lib/x86_64-linux-gnu/libc.so.6(abort+0xd3)[0x7f6e1c6287f3]",
        ),
    )[0];
    assert_eq!(answer(report), "abort-during-exit", "{report:#}");
    assert!(
        report["exception"].to_string().contains("SIGABRT"),
        "{report:#}"
    );
    // Words about a timeout that say nothing of a dump are no hang dump.
    let report = &analyze_text(
        "timeout-setting.txt",
        &stack("test timeout is 300 s", unnamed),
    )[0];
    assert!(
        report["exception"].to_string().contains("SIGABRT"),
        "{report:#}"
    );

    // faulthandler.dump_traceback_later: every thread, none current.
    let later = "\
tests/test_pool.py::test_shutdown PASSED
Timeout (0:00:05)!
Thread 0x00007f3b2e7fc700 (most recent call first):
  File \"/usr/lib/python3.11/threading.py\", line 320 in wait
  File \"/srv/app/pool.py\", line 41 in _worker
  File \"/usr/lib/python3.11/threading.py\", line 1038 in _bootstrap_inner

Thread 0x00007f3b31b4e740 (most recent call first):
  File \"/usr/lib/python3.11/threading.py\", line 1583 in _shutdown
";
    let report = &analyze_text("later.txt", later)[0];
    assert_eq!(answer(report), "python-exit-waits-for-thread", "{report:#}");
    assert!(report["exception"].is_null(), "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("Timeout (0:00:05)!"),
        "{report:#}"
    );
}

/// A sanitizer's unsymbolized frames (`#3 0x...  (/bin/app+0x1c)`, no `in
/// NAME`) and newer runtimes' ` (BuildId: ...)` after the module are read
/// with their module and offset.
#[test]
fn sanitizer_frames_without_a_name_or_with_a_build_id() {
    let text = "\
==4242==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x55d0c1a2e48e bp 0x7ffd3a1c0a10 sp 0x7ffd3a1c09f0 T0)
    #0 0x55d0c1a2e48e  (/opt/app/bin/app+0x2e48e)
    #1 0x55d0c1a2f1c3 in load_plugins(char const*) (/opt/app/bin/app+0x2f1c3) (BuildId: 0123456789abcdef0123456789abcdef01234567)
    #2 0x7f3b8993db6b in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x29d8f)
";
    let report = &analyze_text("asan-bare.txt", text)[0];
    let frames = report["threads"][0]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3, "{report:#}");
    assert_eq!(frames[0]["module"], "app");
    assert_eq!(frames[0]["function"], Value::Null);
    assert_eq!(frames[1]["function"], "load_plugins(char const*)");
    assert_eq!(frames[1]["module"], "app");
}

/// macOS's JSON crash report (`.ips`), pasted whole: its header line, then
/// the report pretty-printed. A crash in a static destructor under exit is
/// an exit-time crash; the same report of a crash in the run loop is not.
#[test]
fn macos_json_crash_reports() {
    let report = |frames: &str| {
        format!(
            "{{\"app_name\":\"tiler\",\"timestamp\":\"2024-06-01 09:00:00.00 +0000\",\"bug_type\":\"309\",\"os_version\":\"macOS 14.5 (23F79)\",\"name\":\"tiler\"}}
{{
  \"uptime\" : 4100,
  \"procName\" : \"tiler\",
  \"exception\" : {{\"codes\":\"0x0000000000000001, 0x0000000000000010\",\"type\":\"EXC_BAD_ACCESS\",\"signal\":\"SIGSEGV\",\"subtype\":\"KERN_INVALID_ADDRESS at 0x0000000000000010\"}},
  \"faultingThread\" : 0,
  \"threads\" : [{{\"triggered\":true,\"id\":90210,\"queue\":\"com.apple.main-thread\",\"frames\":[{frames}]}},
    {{\"id\":90211,\"frames\":[{{\"imageOffset\":5420,\"symbol\":\"__psynch_cvwait\",\"symbolLocation\":8,\"imageIndex\":2}},{{\"imageOffset\":28700,\"symbol\":\"_pthread_cond_wait\",\"symbolLocation\":1228,\"imageIndex\":3}}]}}],
  \"usedImages\" : [{{\"source\":\"P\",\"arch\":\"arm64\",\"base\":4294967296,\"size\":65536,\"name\":\"tiler\"}},{{\"source\":\"P\",\"arch\":\"arm64\",\"base\":6442450944,\"size\":524288,\"name\":\"libsystem_c.dylib\"}},{{\"name\":\"libsystem_kernel.dylib\"}},{{\"name\":\"libsystem_pthread.dylib\"}},{{\"name\":\"libtiles.dylib\"}}]
}}
"
        )
    };
    let at_exit = report(
        "{\"imageOffset\":8212,\"symbol\":\"tiles::Cache::~Cache()\",\"symbolLocation\":24,\"imageIndex\":4},{\"imageOffset\":30212,\"symbol\":\"__cxa_finalize_ranges\",\"symbolLocation\":476,\"imageIndex\":1},{\"imageOffset\":28900,\"symbol\":\"exit\",\"symbolLocation\":44,\"imageIndex\":1},{\"imageOffset\":1800,\"symbol\":\"main\",\"symbolLocation\":300,\"imageIndex\":0}",
    );
    let reports = analyze_text("tiler.ips", &at_exit);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let got = answer(&reports[0]);
    assert!(
        ["crash-in-static-destructor", "crash-during-exit"].contains(&got.as_str()),
        "{got}: {:#}",
        reports[0]
    );
    assert_eq!(reports[0]["source"]["format"], "apple-crash-report");
    let working = report(
        "{\"imageOffset\":8212,\"symbol\":\"tiles::Cache::get(int)\",\"symbolLocation\":24,\"imageIndex\":4},{\"imageOffset\":9000,\"symbol\":\"render_frame\",\"symbolLocation\":60,\"imageIndex\":0},{\"imageOffset\":1800,\"symbol\":\"main\",\"symbolLocation\":300,\"imageIndex\":0}",
    );
    let reports = analyze_text("tiler-work.ips", &working);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(answer(&reports[0]), "none", "{:#}", reports[0]);
}
