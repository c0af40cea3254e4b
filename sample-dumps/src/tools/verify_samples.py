#!/usr/bin/env python3
"""Check every sample dump against what it is meant to show, then write
expected.toml (the machine-readable expectations the analyzer's tests use).

For each sample in SAMPLES below:
  * the dump parses, has the UnloadedModuleList (14) and ThreadNames (24)
    streams, and every module built by this project carries its debug id;
  * the blamed thread is found (the exception thread for crashes, the main
    thread, i.e. the first thread in the list, for hangs), has the expected
    name, and - walked by minidump-stackwalk with symbols/ - shows every key
    function; other named threads show theirs;
  * the unloaded modules and the exception code are the expected ones.
Thread ids are read from the dump (they change from run to run) and written
into expected.toml.

usage: verify_samples.py SAMPLE_DIR [--no-write]
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdmp_info  # noqa: E402

OUR_MODULES = {
    "hip_repro.exe", "hip_detach.exe", "hip_torch_app.exe", "torch_hip.dll", "hip_pal.exe", "hip_train_step.exe", "hip_service.exe",
    "amdhip64_6.dll", "python.exe", "python312.dll", "_ctypes.pyd",
    "Microsoft.Windows.AI.MachineLearning.dll", "ort_webgpu_app.exe", "onnxruntime.dll",
    "webgpu_dawn.dll", "node.exe", "onnxruntime_binding.node", "llamafile.exe", "ggml-vulkan.dll",
    "vulkan-1.dll", "amdvlk64.dll", "crashcap.dll", "hip_batch_infer.exe", "vkcube.exe",
    "plugin_registry.exe", "plugin_host.exe", "telemetry.dll",
    "render_farm.exe", "applog.dll", "logsink.dll", "gpu_queue.exe", "codec.dll",
    "media_host.exe",
}

# blamed: "exception" (the thread in the Exception stream), "main" (first thread), or None.
SAMPLES = [
    dict(file="winml-epcatalog-release.dmp", signature="winml-epcatalog-release",
         also_true=["crash-during-exit"], kind="crash", process="python.exe",
         exception_code="0xc0000005", capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name="python-finalizer",
         key_functions=["WinMLEpCatalogRelease", "winml::EpCatalog::Release", "PyCFuncPtr_call",
                        "slot_tp_finalize"],
         threads={"main": ["Py_FinalizeEx", "wait_for_thread_shutdown", "Py_Main"]},
         unloaded=[], absent_functions=[]),
    dict(file="hip-unregister-fatbinary-hang.dmp", signature="hip-unregister-fatbinary-hang",
         also_true=["hang-during-exit"], kind="hang", process="hip_repro.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name=None,
         key_functions=["__hipUnregisterFatBinary", "hip::Device::SyncAllStreams",
                        "amd::HostQueue::finish", "__hip_module_dtor"],
         threads={"hip-worker-0": ["Pal::Device::WaitForFences", "amd::HostQueue::loop"],
                  "hip-worker-1": ["amd::Monitor::wait", "amd::HostQueue::loop"]},
         unloaded=[], absent_functions=["main"]),
    dict(file="hip-dllmain-detach-hang.dmp", signature="pal-fence-wait-at-exit",
         also_true=["loader-lock-at-exit", "hang-during-exit"], kind="hang", process="hip_detach.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name=None,
         key_functions=["ihipDestroyDevice", "DllMain", "amd::HostQueue::terminate",
                        "amd::Monitor::wait"],
         threads={}, unloaded=[], absent_functions=["__hipUnregisterFatBinary", "main"]),
    dict(file="hip-fatbinary-hang-in-dll-detach.dmp", signature="hip-unregister-fatbinary-hang",
         also_true=["loader-lock-at-exit", "hang-during-exit"], kind="hang",
         process="hip_torch_app.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name=None,
         key_functions=["__hipUnregisterFatBinary", "__hip_module_dtor", "hip::Device::SyncAllStreams",
                        "amd::HostQueue::finish"],
         threads={}, unloaded=[], absent_functions=["main"]),
    dict(file="pal-fence-wait-at-exit.dmp", signature="pal-fence-wait-at-exit",
         also_true=["hang-during-exit"], kind="hang", process="hip_pal.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name=None,
         key_functions=["Pal::Device::WaitForFences", "Pal::Queue::WaitIdle", "hipFree",
                        "release_device_buffers"],
         threads={"hip-worker-0": ["Pal::Device::WaitForFences"]},
         unloaded=[], absent_functions=["__hipUnregisterFatBinary", "main"]),
    dict(file="dxc-after-unload.dmp", signature="dxc-after-unload",
         also_true=["crash-in-unloaded-module", "crash-during-exit"], kind="crash",
         process="ort_webgpu_app.exe", exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["dawn::native::d3d12::Backend::~Backend", "wgpuInstanceRelease",
                        "wgpu::Instance::~Instance",
                        "onnxruntime::webgpu::WebGpuContextFactory::`dynamic atexit destructor for 'default_instance_'"],
         threads={}, unloaded=["dxcompiler.dll", "dxil.dll"],
         # The COM vtable read: the caller faults, the data address is in
         # the unloaded compiler's range.
         crash_in_module="webgpu_dawn.dll", access_in_unloaded="dxcompiler.dll",
         absent_functions=[]),
    dict(file="dxc-detached-at-exit.dmp", signature="dxc-after-unload",
         also_true=["crash-in-static-destructor", "crash-during-exit"], kind="crash",
         process="ort_webgpu_app.exe", exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["DxcSwapThreadMalloc", "DxcCompiler_Release",
                        "dawn::native::d3d12::Backend::~Backend", "wgpuInstanceRelease",
                        "wgpu::Instance::~Instance"],
         threads={}, unloaded=[], absent_functions=[]),
    # With symbols for the programs only, the walk stops in Wine's exception
    # dispatcher: the throw's frames are found by the stack search (the rule
    # accepts that), so they are not key frames of the walk, and exit is not
    # proven for the generic rules.
    dict(file="ort-logger-after-teardown.dmp", signature="ort-logger-after-teardown",
         also_true=[], kind="crash", process="ort_webgpu_app.exe",
         exception_code="0x40000015",
         capture="in-process: SIGABRT handler (crashcap.dll), abort() from std::terminate during DLL_PROCESS_DETACH",
         blamed="exception", blamed_name=None,
         key_functions=["std::terminate", "onnxruntime::NoexceptBoundary"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="ort-node-env-late-release.dmp", signature="ort-node-env-late-release",
         also_true=["crash-during-exit"], kind="crash", process="node.exe",
         exception_code="0xc0000005", capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["OrtApis::ReleaseTypeInfo", "Ort::detail::Base<OrtTypeInfo>::~Base",
                        "InferenceSessionWrap::~InferenceSessionWrap", "node::FreeEnvironment"],
         threads={"v8-platform-worker-0": ["node::platform_worker"]},
         unloaded=[], absent_functions=[]),
    dict(file="ort-node-env-released-at-detach.dmp", signature="ort-node-env-late-release",
         also_true=["crash-in-static-destructor", "crash-during-exit"], kind="crash", process="node.exe",
         exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["onnxruntime::concurrency::ThreadPool::~ThreadPool",
                        "onnxruntime::Environment::~Environment", "OrtEnv::Release",
                        "OrtApis::ReleaseEnv", "Ort::detail::Base<OrtEnv>::~Base"],
         crash_in_module="onnxruntime.dll",
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="vulkan-probe-driver-exception.dmp", signature="vulkan-probe-driver-exception",
         also_true=[], kind="crash", process="llamafile.exe", exception_code="0xe06d7363",
         capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["vk::Instance::Init", "vkCreateInstance", "ggml_backend_vk_get_device_count",
                        "gpu_backend_probe"],
         threads={"llamafile-log": []}, unloaded=[], absent_functions=[]),
    dict(file="vulkan-device-destroyed-at-exit.dmp", signature="vulkan-teardown-at-exit",
         also_true=["crash-during-exit"], kind="crash", process="llamafile.exe",
         exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["Pal::Device::Destroy", "vk::entry::vkDestroyDevice", "vkDestroyDevice",
                        "ggml_vk_cleanup"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="opencl-context-released-at-exit.dmp", signature="opencl-release-at-exit",
         also_true=["crash-during-exit"], kind="crash", process="photo_export.exe",
         exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["amd_Context_release", "clReleaseContext", "cl_engine_release_context"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="directml-device-released-at-exit.dmp", signature="d3d12-directml-at-exit",
         also_true=["crash-during-exit"], kind="crash", process="gpu_job.exe",
         exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["dml::Device::FreeResources", "dml::Device::Release", "dml_session_release_device"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="cudnn-handle-destroyed-at-exit.dmp", signature="cuda-library-handle-at-exit",
         also_true=["crash-during-exit"], kind="crash", process="gpu_job.exe",
         exception_code="0xc0000005",
         capture="in-process: vectored handler while the loader runs DLL_PROCESS_DETACH (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["cudnn_release_streams", "cudnnDestroy", "conv_engine_destroy_handle"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="crash-during-work.dmp", signature=None, also_true=[], kind="crash",
         process="ort_webgpu_app.exe", exception_code="0xc0000005",
         capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name="ort-intra-op-1",
         key_functions=["onnxruntime::contrib::MatMulNBits::Compute",
                        "onnxruntime::concurrency::ThreadPool::WorkerLoop"],
         # The main thread waits at the pool's barrier (RunInParallel) inside
         # Wine's kernelbase: with .sym files for the programs only, nothing
         # unwinds that wait, and the walk's stack scan stops at a stale
         # return address (operator new, from creating the pool), as
         # minidump-stackwalk's does; the store twin unwinds it through
         # kernelbase's .pdata.
         threads={"main": []}, unloaded=[], absent_functions=[]),
    dict(file="healthy-multithreaded.dmp", signature=None, also_true=[], kind="live",
         process="hip_service.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed=None, blamed_name=None, key_functions=[],
         threads={"service-main": ["serve_requests", "main"],
                  "hip-worker-0": ["amd::HostQueue::loop"], "hip-worker-1": ["amd::HostQueue::loop"],
                  "app-worker-0": ["app_worker"], "app-worker-1": ["app_worker"]},
         unloaded=[], absent_functions=[]),
    dict(file="hang-during-work.dmp", signature=None, also_true=[], kind="hang",
         process="hip_train_step.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         # A hang during normal work looks, in one snapshot, like a healthy
         # process waiting: no thread is exiting, so none is blamed.
         blamed=None, blamed_name=None, key_functions=[],
         threads={"main": ["hipStreamSynchronize", "amd::HostQueue::finish", "train_step", "main"],
                  "hip-worker-0": ["Pal::Device::WaitForFences"]},
         unloaded=[], absent_functions=[]),
    # The false-positive corpus: failures next to the exit-time ones that no
    # specific signature may claim.
    # With symbols for its own modules only, the main thread's walk breaks in
    # Wine's kernelbase (no unwind information) and a stale return address
    # into amdhip64 ends it: exit cannot be shown, and no thread is blamed.
    dict(file="hang-at-exit-app-handler.dmp", signature=None, also_true=[],
         kind="hang", process="hip_batch_infer.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed=None, blamed_name=None, key_functions=[],
         threads={"hip-worker-0": ["Pal::Device::WaitForFences", "amd::HostQueue::loop"],
                  "batch-log-writer": ["log_writer"]},
         unloaded=[], absent_functions=["__hipUnregisterFatBinary", "hipFree"]),
    dict(file="vulkan-render-crash.dmp", signature=None, also_true=[], kind="crash",
         process="vkcube.exe", exception_code="0xc0000005",
         capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name="vkcube-main",
         key_functions=["Pal::Queue::SubmitChunks", "vkQueueSubmit", "draw_frame", "render_loop"],
         threads={}, unloaded=[], absent_functions=["vkCreateInstance"]),
    dict(file="startup-ctor-crash.dmp", signature=None, also_true=[], kind="crash",
         process="plugin_registry.exe", exception_code="0xc0000005",
         capture="in-process: unhandled-exception filter (crashcap.dll)",
         blamed="exception", blamed_name=None,
         key_functions=["PluginRegistry::scan", "PluginRegistry::PluginRegistry"],
         threads={}, unloaded=[], absent_functions=[]),
    dict(file="loader-lock-at-startup.dmp", signature=None, also_true=[], kind="hang",
         process="plugin_host.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed=None, blamed_name=None, key_functions=[],
         threads={"plugin-host-main": ["start_uploader", "load_plugin", "load_plugins"]},
         unloaded=[], absent_functions=[]),
    # Without ntdll's names (no system symbols or export tables) the thread
    # teardown and the lock waits are not visible: tests/waits_windows.rs
    # checks the answer with the store's export tables.
    dict(file="loader-lock-deadlock-at-exit.dmp", signature="hang-during-exit",
         also_true=[], kind="hang",
         process="render_farm.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name="render-main",
         key_functions=["close_sink", "applog_shutdown", "stop_logging_at_exit"],
         threads={"encoder-worker": ["flush_thread_buffer", "DllMain"]},
         unloaded=[], absent_functions=[]),
    dict(file="critical-section-owner-gone-at-exit.dmp", signature="hang-during-exit",
         also_true=[], kind="hang", process="gpu_queue.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name="queue-main",
         key_functions=["drain_queue_at_exit"],
         threads={},
         unloaded=[], absent_functions=["submit_thread"]),
    # With ntdll's names (the store's export tables) the ending decoder
    # thread is seen waiting in LdrShutdownThread for the loader lock:
    # tls-teardown-hang-at-exit (tests/waits_windows.rs, twins.toml).
    dict(file="dllmain-waits-for-thread-at-exit.dmp", signature="loader-lock-at-exit",
         also_true=["hang-during-exit"], kind="hang", process="media_host.exe", exception_code=None,
         capture="out-of-process: capture.exe (OpenProcess + MiniDumpWriteDump) after 1.5 s",
         blamed="main", blamed_name="media-main",
         key_functions=["stop_decoder", "DllMain", "unload_plugins_at_exit"],
         threads={"codec-decoder": []},
         unloaded=["codec.dll"], absent_functions=[]),
]


def bare(fn):
    """Function name without its parameter list: 'a::b(int) const' -> 'a::b'."""
    if fn is None:
        return ""
    depth = 0
    for i, ch in enumerate(fn):
        if ch == "(" and depth == 0 and i > 0 and not fn[:i].endswith("operator"):
            # keep "`dynamic atexit destructor for 'x'" intact
            return fn[:i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
    return fn


def stackwalk(path, symbols):
    exe = shutil.which("minidump-stackwalk") or os.path.expanduser("~/.cargo/bin/minidump-stackwalk")
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "--json", "--symbols-path", symbols, path], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def toml_str(v):
    if v is None:
        return '""'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_str(x) for x in v) + "]"
    return json.dumps(v)


def main():
    sample_dir = sys.argv[1]
    write = "--no-write" not in sys.argv
    symbols = os.path.join(sample_dir, "symbols")
    failures, records = [], []
    for s in SAMPLES:
        path = os.path.join(sample_dir, s["file"])
        errs = []
        if not os.path.exists(path):
            print(f"MISSING {s['file']}")
            failures.append(s["file"])
            continue
        info = mdmp_info.parse(path)
        types = {st["type"] for st in info["streams"]}
        for t, name in ((14, "UnloadedModuleList"), (24, "ThreadNames")):
            if t not in types:
                errs.append(f"no {name} stream")
        exe_name = info["modules"][0]["name"].split("\\")[-1]
        if exe_name != s["process"]:
            errs.append(f"process is {exe_name}, expected {s['process']}")
        for m in info["modules"]:
            base = m["name"].split("\\")[-1]
            if base in OUR_MODULES and not m["codeview"]:
                errs.append(f"{base} has no debug id")
        unloaded = sorted(u["name"] for u in info["unloaded"])
        for u in s["unloaded"]:
            if u not in unloaded:
                errs.append(f"{u} not in the unloaded module list {unloaded}")
        exc = info["exception"]
        if s["exception_code"]:
            if not exc or exc["code"] != s["exception_code"]:
                errs.append(f"exception {exc and exc['code']} != {s['exception_code']}")
        elif exc:
            errs.append(f"unexpected exception stream {exc['code']}")
        tids = [t["tid"] for t in info["threads"]]
        names = info["thread_names"]
        blamed_tid = None
        if s["blamed"] == "exception":
            blamed_tid = exc["thread"] if exc else None
        elif s["blamed"] == "main":
            blamed_tid = tids[0]
        blamed_name = names.get(blamed_tid, "") if blamed_tid is not None else ""
        if s["blamed_name"] is not None and blamed_name != s["blamed_name"]:
            errs.append(f"blamed thread is named {blamed_name!r}, expected {s['blamed_name']!r}")

        if s.get("crash_in_module") and exc:
            ip = int(exc["address"], 16)
            holder = [m["name"].split("\\")[-1] for m in info["modules"]
                      if int(m["base"], 16) <= ip < int(m["base"], 16) + int(m["size"], 16)]
            if s["crash_in_module"] not in holder:
                errs.append(f"crash address {exc['address']} not in {s['crash_in_module']} ({holder})")
        if s.get("access_in_unloaded") and exc:
            params = exc["params"]
            access = int(params[1], 16) if len(params) > 1 else None
            holder = [u["name"] for u in info["unloaded"]
                      if access is not None and int(u["base"], 16) <= access < int(u["end"], 16)]
            if s["access_in_unloaded"] not in holder:
                errs.append(f"access address {access and hex(access)} not in unloaded "
                            f"{s['access_in_unloaded']} ({holder})")

        walk = stackwalk(path, symbols)
        frames_by_tid = {}
        if walk is None:
            print("  (minidump-stackwalk not installed: stack checks skipped)")
        else:
            for t in walk["threads"]:
                frames_by_tid[t["thread_id"]] = [bare(f.get("function")) for f in t["frames"]]
            if s.get("crash_in_unloaded"):
                top = walk["threads"][walk["crash_info"]["crashing_thread"]]["frames"][0]
                ul = [u.get("module") for u in (top.get("unloaded_modules") or [])]
                if s["crash_in_unloaded"] not in ul:
                    errs.append(f"crash address not in unloaded {s['crash_in_unloaded']} ({ul})")

            def check(tid, wanted, label):
                have = frames_by_tid.get(tid, [])
                for fn in wanted:
                    if fn not in have:
                        errs.append(f"{label}: {fn!r} not on the stack")

            if blamed_tid is not None:
                check(blamed_tid, s["key_functions"], f"thread {blamed_tid}")
            for tname, fns in s["threads"].items():
                tid = tids[0] if tname == "main" else next(
                    (t for t, n in names.items() if n == tname), None)
                if tid is None:
                    errs.append(f"no thread named {tname!r}")
                    continue
                check(tid, fns, f"thread {tname}")
            for fn in s["absent_functions"]:
                if blamed_tid is not None and fn in frames_by_tid.get(blamed_tid, []):
                    errs.append(f"{fn!r} should not be on the blamed thread")
            if s["signature"] in ("pal-fence-wait-at-exit",):
                for tid, fr in frames_by_tid.items():
                    if "__hipUnregisterFatBinary" in fr:
                        errs.append(f"__hipUnregisterFatBinary on thread {tid}")
        status = "ok" if not errs else "FAIL"
        print(f"{status:4} {s['file']}: {len(tids)} threads, blamed {blamed_tid} {blamed_name!r}, "
              f"unloaded {unloaded}")
        for e in errs:
            print(f"     - {e}")
        if errs:
            failures.append(s["file"])
        records.append((s, blamed_tid, blamed_name, tids, names, unloaded))

    if write:
        lines = [
            "# Expected diagnosis for each sample dump in this folder.",
            "# Written by src/tools/verify_samples.py after regenerate.sh captured the dumps;",
            "# thread ids come from the dumps themselves. Function names are given without",
            "# their parameter lists (minidump-stackwalk prints e.g. 'hip::Device::SyncAllStreams(bool)').",
            "# signature = \"\" means: no exit-time signature must be reported.",
            "# also_true: generic signatures whose conditions also hold (the specific one should win).",
            "# blamed_thread_id = -1 means: no thread is to blame (no thread is exiting: a healthy process, or a hang during normal work).",
            "",
        ]
        for s, tid, tname, tids, names, unloaded in records:
            block = [
                "[[dump]]",
                f"file = {toml_str(s['file'])}",
                f"signature = {toml_str(s['signature'] or '')}",
                f"also_true = {toml_str(s['also_true'])}",
                f"kind = {toml_str(s['kind'])}",
                f"process = {toml_str(s['process'])}",
                f"exception_code = {toml_str(s['exception_code'] or '')}",
                f"capture = {toml_str(s['capture'])}",
                f"blamed_thread_id = {tid if tid is not None else -1}",
                f"blamed_thread_name = {toml_str(tname or '')}",
                f"key_functions = {toml_str(s['key_functions'])}",
                f"absent_functions = {toml_str(s['absent_functions'])}",
                f"unloaded_modules = {toml_str(unloaded)}",
                f"thread_ids = {toml_str(tids)}",
                f"thread_names = {toml_str([f'{t}={n}' for t, n in sorted(names.items())])}",
            ]
            tf = {k: v for k, v in s["threads"].items() if v}
            block.append("thread_functions = { " + ", ".join(
                f"{json.dumps(k)} = {toml_str(v)}" for k, v in tf.items()) + " }")
            lines += block + [""]
        # The Linux and vendor samples' entries are written by hand
        # (linux/capture.sh and vendor/capture.sh make those dumps): keep
        # them as they are (everything from the Linux heading to the end).
        path = os.path.join(sample_dir, "expected.toml")
        linux = ""
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
            at = old.find("# Linux samples")
            if at >= 0:
                linux = old[at:]
        with open(path, "w") as f:
            f.write("\n".join(lines) + linux)
    print(f"{len(SAMPLES) - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
