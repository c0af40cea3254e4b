//! Each format's lines, read alone.

use super::*;

fn frame_of(line: &str, inside: Option<Format>) -> (Format, TextFrame) {
    match classify(line, inside) {
        Some(Line::Frame(format, frame)) => (format, frame),
        other => panic!("{line:?}: {other:?}"),
    }
}

/// gdb: a frame with its source, one in a library without a name, one
/// without an address.
#[test]
fn gdb_frames() {
    let (f, g) = frame_of(
        "#2  0x00007f3a1c2d3e4f in __run_exit_handlers (status=0) at exit.c:113",
        None,
    );
    assert_eq!(
        (f, g.function.as_deref(), g.file.as_deref(), g.line),
        (
            Format::Gdb,
            Some("__run_exit_handlers"),
            Some("exit.c"),
            Some(113)
        )
    );
    let (_, g) = frame_of(
        "#1  0x00007ffff7a42d3b in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1",
        None,
    );
    assert_eq!(
        (g.function, g.module.as_deref()),
        (None, Some("libcuda.so.1"))
    );
    let (_, g) = frame_of(
        "#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57",
        None,
    );
    assert_eq!(
        g.function.as_deref(),
        Some("__futex_abstimed_wait_common64")
    );
}

/// lldb: module`function + offset at file:line:column.
#[test]
fn lldb_frames() {
    let (f, l) = frame_of(
        "    frame #3: 0x0000000100003f2c libfoo.dylib`Foo::~Foo() + 28 at foo.cpp:12:3",
        None,
    );
    assert_eq!(
        (
            f,
            l.module.as_deref(),
            l.function.as_deref(),
            l.function_offset,
            l.line
        ),
        (
            Format::Lldb,
            Some("libfoo.dylib"),
            Some("Foo::~Foo()"),
            Some(28),
            Some(12)
        )
    );
}

/// WinDbg's `k`: module!function+offset, and a module + offset without symbols.
#[test]
fn windbg_frames() {
    let (f, w) = frame_of(
        "00 000000b5`6d9ff6a8 00007ffd`1c2c2a4e     ntdll!NtWaitForSingleObject+0x14",
        None,
    );
    assert_eq!(
        (
            f,
            w.module.as_deref(),
            w.function.as_deref(),
            w.function_offset
        ),
        (
            Format::WinDbg,
            Some("ntdll.dll"),
            Some("NtWaitForSingleObject"),
            Some(0x14)
        )
    );
    let (_, w) = frame_of(
        "0000004f`6b9ff8c0 00007ff8`3b2a1234 amdhip64_6+0x2f1a3",
        None,
    );
    assert_eq!(
        (w.module.as_deref(), w.function, w.module_offset),
        (Some("amdhip64_6.dll"), None, Some(0x2f1a3))
    );
}

/// Visual Studio's Call Stack window, with and without a name.
#[test]
fn visual_studio_frames() {
    let (f, v) = frame_of(
        ">\tonnxruntime.dll!onnxruntime::logging::Logger::Log(int x) Line 42\tC++",
        None,
    );
    assert_eq!(
        (f, v.module.as_deref(), v.line),
        (Format::VisualStudio, Some("onnxruntime.dll"), Some(42))
    );
    let (_, v) = frame_of(" \tnvcuda64.dll!00007ffb12345678()\tUnknown", None);
    assert_eq!((v.function, v.address), (None, Some(0x7ffb12345678)));
    // An IDE over gdb repeats the module before the name; its columns cut
    // the parameters open.
    let (_, v) = frame_of(">     msvcrt.dll!msvcrt!_cexit(  ) Line 0 ", None);
    assert_eq!(v.function.as_deref(), Some("_cexit"));
    let (_, v) = frame_of(" \tapp.exe!core!Start() Line 3\tC++", None);
    assert_eq!(v.function.as_deref(), Some("core!Start()"));
}

/// faulthandler's and a Python traceback's `File` lines.
#[test]
fn python_frames() {
    let (f, p) = frame_of("  File \"windowsml/__init__.py\", line 428 in close       # WinMLEpCatalogRelease(self._handle)", Some(Format::Faulthandler));
    assert_eq!(
        (f, p.function.as_deref(), p.line, p.python),
        (Format::Faulthandler, Some("close"), Some(428), true)
    );
    let (f, _) = frame_of(
        "  File \"/usr/lib/python3.11/threading.py\", line 1590, in _shutdown",
        None,
    );
    assert_eq!(f, Format::PythonTraceback);
}

/// glibc's backtrace_symbols, its mangled names demangled.
#[test]
fn backtrace_symbols_frames() {
    let (f, b) = frame_of(
        "/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xf3)[0x7f0e1c2d3083]",
        None,
    );
    assert_eq!(
        (
            f,
            b.module.as_deref(),
            b.function.as_deref(),
            b.function_offset
        ),
        (
            Format::BacktraceSymbols,
            Some("libc.so.6"),
            Some("__libc_start_main"),
            Some(0xf3)
        )
    );
    let (_, b) = frame_of("./prog(_ZN3foo3barEv+0x1a)[0x4005d6]", None);
    assert_eq!(b.function.as_deref(), Some("foo::bar()"));
    // A libunwind walk's lines: registers first, no module.
    let (f, b) = frame_of(
        "ip = 7f269ba0bbe0, sp = 7fff57aee8c0: (exit+0x20) [0x7f269ba0bbe0]",
        None,
    );
    assert_eq!(
        (f, b.module, b.function.as_deref()),
        (Format::BacktraceSymbols, None, Some("exit"))
    );
}

/// A sanitizer's `#N 0x... in f (module+offset)`.
#[test]
fn sanitizer_frames() {
    let (f, a) = frame_of(
        "    #1 0x7f2a in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21bf6)",
        None,
    );
    assert_eq!(
        (f, a.module.as_deref(), a.module_offset),
        (Format::Sanitizer, Some("libc.so.6"), Some(0x21bf6))
    );
}

/// Rust's backtrace: the hash after the path goes.
#[test]
fn rust_frames() {
    let (f, r) = frame_of(
        "  13: std::rt::lang_start::h0123456789abcdef",
        Some(Format::Rust),
    );
    assert_eq!(
        (f, r.function.as_deref()),
        (Format::Rust, Some("std::rt::lang_start"))
    );
}

/// py-spy's native and Python frames.
#[test]
fn py_spy_frames() {
    let (f, s) = frame_of(
        "    pthread_cond_timedwait (libc-2.31.so)",
        Some(Format::PySpy),
    );
    assert_eq!(
        (f, s.module.as_deref(), s.python),
        (Format::PySpy, Some("libc-2.31.so"), false)
    );
    let (_, s) = frame_of("    wait (threading.py:324)", Some(Format::PySpy));
    assert_eq!(
        (s.function.as_deref(), s.line, s.python),
        (Some("wait"), Some(324), true)
    );
}

/// eu-stack's `#N 0x... function - module`.
#[test]
fn eu_stack_frames() {
    let (f, e) = frame_of(
        "#3  0x00007f2d1c0a2b3c __hipUnregisterFatBinary - /opt/rocm/lib/libamdhip64.so.6",
        None,
    );
    assert_eq!(
        (f, e.function.as_deref(), e.module.as_deref()),
        (
            Format::EuStack,
            Some("__hipUnregisterFatBinary"),
            Some("libamdhip64.so.6")
        )
    );
}

/// compute-sanitizer's host frames (the module on the next line, read
/// inside its trace) and cuda-memcheck's (the module first).
#[test]
fn cuda_sanitizer_host_frames() {
    for (line, module, function, file_line) in [
        (
            "=========     Host Frame:/usr/lib64/libcuda.so.1 [0x311153]",
            Some("libcuda.so.1"),
            None,
            None,
        ),
        (
            "=========     Host Frame:/opt/app/solver (_ZN4Pool5clearEv + 0x73) [0x1c673]",
            Some("solver"),
            Some("Pool::clear()"),
            None,
        ),
        ("=========     Host Frame: [0x2f1a3c]", None, None, None),
        (
            "=========     Host Frame:cudaFree [0x51b2e]",
            None,
            Some("cudaFree"),
            None,
        ),
        (
            "=========     Host Frame:Pool::~Pool() in /src/pool.cu:88 [0x1a2b3]",
            None,
            Some("Pool::~Pool()"),
            Some(("/src/pool.cu", 88)),
        ),
        (
            "=========     Host Frame:/src/interp.c:127:do_call [0xe9b65]",
            None,
            Some("do_call"),
            Some(("/src/interp.c", 127)),
        ),
    ] {
        let (format, f) = frame_of(line, None);
        assert_eq!(format, Format::CudaSanitizer, "{line}");
        assert_eq!(f.module.as_deref(), module, "{line}");
        assert_eq!(f.function.as_deref(), function, "{line}");
        assert_eq!(f.file.as_deref().zip(f.line), file_line, "{line}");
    }
    assert_eq!(
        classify(
            "=========                in /usr/lib/libcudart.so.12",
            Some(Format::CudaSanitizer)
        ),
        Some(Line::Module("libcudart.so.12".to_string()))
    );
    // Outside its trace, and a report's other lines, are nothing.
    assert_eq!(
        classify("=========                in /usr/lib/libcudart.so.12", None),
        None
    );
    assert_eq!(classify("========= ERROR SUMMARY: 1 error", None), None);
    assert!(matches!(
        classify("========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call to cudaStreamSynchronize.", None),
        Some(Line::Crash { what, .. }) if what == "CUDA API error cudaErrorLaunchFailure"
    ));
}

/// lldb's marks after a frame's location are not part of its name.
/// gdb names a function or an address on every frame: a numbered line
/// with neither (Julia's anonymous closure `#658 at FILE:LINE`) is no
/// gdb frame.
#[test]
fn gdb_frames_name_a_function_or_an_address() {
    for line in [
        "#658 at /home/u/.julia/dev/Pkg/src/lib.jl:78 [inlined]",
        "#12 at /opt/app/src/main.jl:9",
    ] {
        assert!(
            !matches!(classify(line, None), Some(Line::Frame(Format::Gdb, _))),
            "{line}"
        );
    }
    let (format, f) = frame_of("#1  main () at main.c:3", None);
    assert_eq!((format, f.function.as_deref()), (Format::Gdb, Some("main")));
    let (format, f) = frame_of("#2  0x00007f0e1c23e495 in ?? ()", None);
    assert_eq!((format, f.address), (Format::Gdb, Some(0x7f0e1c23e495)));
}

#[test]
fn lldb_frame_marks() {
    for line in [
        "  * frame #0: 0x0000000100003f84 libgpu.dylib`Device::release(this=0x0) at device.cc:3:10 [inlined]",
        "    frame #0: 0x0000000100003f84 libgpu.dylib`Device::release(this=0x0) at device.cc:3:10 [opt]",
        "    frame #0: 0x0000000100003f84 libgpu.dylib`Device::release(this=0x0) at device.cc:3 [opt] [inlined]",
    ] {
        let (format, f) = frame_of(line, None);
        assert_eq!(format, Format::Lldb, "{line}");
        assert_eq!(
            (f.function.as_deref(), f.file.as_deref(), f.line),
            (Some("Device::release(this=0x0)"), Some("device.cc"), Some(3)),
            "{line}"
        );
    }
    // A name that has brackets of its own keeps them.
    let (_, f) = frame_of(
        "    frame #1: 0x0000000100003f84 libgpu.dylib`operator[](unsigned long) + 12",
        None,
    );
    assert_eq!(f.function.as_deref(), Some("operator[](unsigned long)"));
}

/// backtrace_symbols lines a handler passed through addr2line keep
/// their frame, with the location.
#[test]
fn backtrace_symbols_with_a_location() {
    let (format, f) = frame_of("./viewer(+0x6697)[0x5647584cb697] ./src/device.c:212", None);
    assert_eq!(format, Format::BacktraceSymbols);
    assert_eq!(
        (
            f.module.as_deref(),
            f.module_offset,
            f.file.as_deref(),
            f.line
        ),
        (
            Some("viewer"),
            Some(0x6697),
            Some("./src/device.c"),
            Some(212)
        )
    );
    assert_eq!(
        classify("see ./viewer(+0x6697)[0x5647584cb697] for more", None),
        None
    );
}

/// systemd-coredump's stacks: `NAME (MODULE + 0xOFFSET)` after the
/// address, `n/a` for none; not gdb's `0x... in NAME (ARGS)`.
#[test]
fn systemd_coredump_stacks() {
    let (format, f) = frame_of(
        "                #1  0x00007f3a16e393ad take_gil (libpython3.13.so.1.0 + 0x2393ad)",
        None,
    );
    assert_eq!(format, Format::SystemdCoredump);
    assert_eq!(
        (f.function.as_deref(), f.module.as_deref(), f.module_offset),
        (
            Some("take_gil"),
            Some("libpython3.13.so.1.0"),
            Some(0x2393ad)
        )
    );
    let (_, f) = frame_of("#0  0x00007f3a16eaa612 n/a (n/a + 0x0)", None);
    assert_eq!((f.function, f.module), (None, None));
    let (format, _) = frame_of(
        "#1  0x00007f3a16e393ad in take_gil (tstate=0x1) at Python/ceval_gil.c:331",
        None,
    );
    assert_eq!(format, Format::Gdb);
    assert!(matches!(
        classify("                Stack trace of thread 4250 (gdbus):", None),
        Some(Line::Thread {
            format: Format::SystemdCoredump,
            id: Some(4250),
            name: Some(n),
            ..
        }) if n == "gdbus"
    ));
    assert!(matches!(
        classify("        Signal: 6 (ABRT)", None),
        Some(Line::Crash { what, .. }) if what == "SIGABRT"
    ));
    assert_eq!(classify("Signal: strong", None), None);
}

/// WinDbg's other layouts: `!analyze -v`'s STACK_TEXT (arguments
/// between colons), inline frames, source locations.
#[test]
fn windbg_layouts() {
    for (line, module, function) in [
        (
            "00000000`0014f9c8 00007ffa`12345678 : 00000000`00000000 00000000`00000001 00000000`00000002 00000000`00000003 : ntdll!NtWaitForSingleObject+0x14",
            "ntdll.dll",
            "NtWaitForSingleObject",
        ),
        (
            "01 (Inline Function) --------`--------     PyMaterialXCore_d!Py_DECREF+0x26 [C:\\b\\object.h @ 932] ",
            "PyMaterialXCore_d.dll",
            "Py_DECREF",
        ),
        (
            "03 00000080`85f7f3d0 00007ffb`78ee9150     PyMaterialXCore_d!pybind11::handle::dec_ref+0x5a [C:\\b\\pytypes.h @ 300] ",
            "PyMaterialXCore_d.dll",
            "pybind11::handle::dec_ref",
        ),
    ] {
        let (format, frame) = frame_of(line, None);
        assert_eq!(format, Format::WinDbg, "{line}");
        assert_eq!(frame.module.as_deref(), Some(module), "{line}");
        assert_eq!(frame.function.as_deref(), Some(function), "{line}");
    }
}

#[test]
fn threads_crashes_and_starts() {
    for header in [
        "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242)) \"worker\":",
        "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242) \"worker\"):",
        "Thread 2 (Thread 0x7f0e1a2b3c40 (LWP 4242)):",
        "Thread 2 (process 4242):",
    ] {
        assert!(
            matches!(
                classify(header, None),
                Some(Line::Thread {
                    format: Format::Gdb,
                    id: Some(4242),
                    ..
                })
            ),
            "{header}"
        );
    }
    assert!(matches!(
        classify("Current thread 0x00007f1a (most recent call first):", None),
        Some(Line::Thread {
            format: Format::Faulthandler,
            current: true,
            event: false,
            ..
        })
    ));
    assert!(matches!(
        classify("Thread 0x0000bc98:", None),
        Some(Line::Thread {
            format: Format::Faulthandler,
            ..
        })
    ));
    assert!(matches!(
        classify("Windows fatal exception: access violation", None),
        Some(Line::Crash { .. })
    ));
    assert!(matches!(
        classify(
            "Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.",
            None
        ),
        Some(Line::Crash {
            thread: Some(1),
            ..
        })
    ));
    assert!(matches!(
        classify(
            "~~~~~~~~~~~~~~~~ Stack of MainThread (140245) ~~~~~~~~~~~~~~~~",
            None
        ),
        Some(Line::Thread {
            format: Format::PythonTraceback,
            ..
        })
    ));
    assert!(matches!(
        classify(
            "* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1)",
            None
        ),
        Some(Line::Thread {
            format: Format::Lldb,
            current: true,
            ..
        })
    ));
    assert!(matches!(
        classify(
            ".  0  Id: 1a2c.1a30 Suspend: 1 Teb: 00000000`00361000 Unfrozen",
            None
        ),
        Some(Line::Thread {
            format: Format::WinDbg,
            current: true,
            event: false,
            id: Some(0x1a30),
            ..
        })
    ));
    assert!(matches!(
        classify("ExceptionCode: c0000005 (Access violation)", None),
        Some(Line::Crash { .. })
    ));
    // Ordinary log lines are nothing.
    for line in [
        "  \"ntdll.dll!NtWaitForSingleObject\",",
        "INFO: 3 tests passed",
        "  1: warming up",
        "# comment",
        "Thread pool started",
        "see foo!bar for details",
    ] {
        assert_eq!(classify(line, None), None, "{line}");
    }
}

#[test]
fn call_tree_lines_are_read_only_as_a_whole_tree() {
    let tree = [
        "outer_main",
        "  run_exit_handlers (status=0)   # note",
        "    lib::Pool::~Pool()   (libpool.so)",
        "      lib::Pool::stop -> std::thread::join()",
    ];
    let mut lines: Vec<Option<String>> = tree.iter().map(|l| Some(l.to_string())).collect();
    // One line alone is no frame.
    assert_eq!(classify(tree[2], None), None);
    mark_call_trees(&mut lines);
    let frames: Vec<TextFrame> = lines
        .iter()
        .map(|l| frame_of(l.as_deref().unwrap(), None))
        .map(|(format, frame)| {
            assert_eq!(format, Format::CallTree);
            frame
        })
        .collect();
    assert_eq!(frames[0].index, Some(0));
    assert_eq!(frames[1].function.as_deref(), Some("run_exit_handlers"));
    assert_eq!(frames[2].module.as_deref(), Some("libpool.so"));
    assert_eq!(frames[3].joined, ["std::thread::join()"]);
    // Three lines are too few; a step back out is no stack.
    for shape in [&tree[..3], &["a_b", "  c_d", "    e_f", "  g_h"][..]] {
        let mut lines: Vec<Option<String>> = shape.iter().map(|l| Some(l.to_string())).collect();
        mark_call_trees(&mut lines);
        assert!(lines
            .iter()
            .all(|l| classify(l.as_deref().unwrap(), None).is_none()));
    }
}

#[test]
fn valgrind_lines() {
    let (f, g) = frame_of(
        "==31== by 0x4E79D8C: __run_exit_handlers (exit.c:108)",
        None,
    );
    assert_eq!(
        (f, g.function.as_deref(), g.file.as_deref(), g.line, g.index),
        (
            Format::Valgrind,
            Some("__run_exit_handlers"),
            Some("exit.c"),
            Some(108),
            None
        )
    );
    let (_, g) = frame_of("   at 0x23D9D97C: ??? (in /opt/x/lib/libx.so.2)", None);
    assert_eq!(
        (g.function, g.module.as_deref(), g.index, g.address),
        (None, Some("libx.so.2"), Some(0), Some(0x23D9_D97C))
    );
    assert!(matches!(
        classify("==31== Invalid free() / delete / delete[] / realloc()", None),
        Some(Line::Crash { what, .. }) if what.starts_with("valgrind: Invalid free()")
    ));
    assert!(matches!(
        classify("==31== Process terminating with default action of signal 11 (SIGSEGV)", None),
        Some(Line::Crash { what, .. }) if what == "SIGSEGV"
    ));
    for aside in [
        "==31==  Address 0x5b8e048 is 8 bytes inside a block of size 32 free'd",
        " Block was alloc'd at",
        "==31== Conditional jump or move depends on uninitialised value(s)",
        "==31== 64 bytes in 1 blocks are definitely lost in loss record 3 of 9",
    ] {
        assert_eq!(
            classify(aside, None),
            Some(Line::Aside(Format::Valgrind)),
            "{aside}"
        );
    }
    // Prose that names a size is no headline.
    assert_eq!(classify("The invalid read of size 8 is fixed.", None), None);
}
