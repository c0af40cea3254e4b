//! Which Python code every thread was running, from the process's memory
//! alone (issue 26): CPython 3.10 to 3.13, found by its `_PyRuntime`
//! symbol in the interpreter's binary (`python3.X` or `libpython3.X.so`),
//! walked with the layouts of that version's headers (offsets.toml, made
//! by scripts/python-offsets.sh).
//!
//! The Python frames are placed among the native frames, each run of them
//! just above the `_PyEval_EvalFrameDefault` call that runs it, as
//! `py-spy dump --native` shows them: a reader sees which Python line made
//! which native call, and the rules' Python patterns and the exit tables'
//! Python exit frames apply to dumps as they do to text traces. When the
//! runs cannot be matched to evaluator frames (no native names), they are
//! put above the first one, or on top, and a warning says so.

mod joins;
mod layout;
mod lines;
#[cfg(target_os = "linux")]
pub(crate) mod live;
mod objects;
mod walk;

use crate::model::{Frame, FrameKind, Report, SymbolSource, Trust};
pub(crate) use layout::GLOBALS_RECORD;
pub(crate) use layout::{Globals, Layout};
pub(crate) use walk::Memory;
use walk::{PyState, PyThread, Walker};

/// A loaded module as the dump lists it.
pub(crate) struct LoadedModule {
    pub path: String,
    pub base: u64,
    pub code_id: Option<String>,
}

/// The interpreter's version, from its binary's name: `python3.11`,
/// `libpython3.12.so.1.0` (not `python3`, a link). A free-threaded build
/// (`python3.13t`) has other layouts: `None`, and `free_threaded` says so.
fn version_of(path: &str) -> Option<(u32, u32)> {
    let (major, minor, tail) = split_version(path)?;
    (!tail.starts_with('t')).then_some((major, minor))
}

fn split_version(path: &str) -> Option<(u32, u32, &str)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let rest = name
        .strip_prefix("libpython")
        .or_else(|| name.strip_prefix("python"))?;
    let (major, rest) = rest.split_once('.')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    Some((
        major.parse().ok()?,
        rest[..digits].parse().ok()?,
        &rest[digits..],
    ))
}

fn free_threaded(modules: &[LoadedModule]) -> bool {
    modules
        .iter()
        .any(|m| split_version(&m.path).is_some_and(|(_, _, tail)| tail.starts_with('t')))
}

/// The symbols' addresses in the binary at `path` (checked against the
/// module's build id), moved by the module's load address.
fn globals(module: &LoadedModule) -> Result<Globals, String> {
    use object::{Object, ObjectSegment, ObjectSymbol};
    let file = std::fs::File::open(&module.path)
        .map_err(|e| format!("cannot read {}: {e}", module.path))?;
    // SAFETY: sound while nobody truncates or writes the binary during
    // the map's life. We never write it; package managers replace a
    // library by renaming a new file into place, which leaves the mapped
    // bytes alone. Rewriting it in place meanwhile is the condition left,
    // as for every memory-mapped reader.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?;
    let elf = object::File::parse(&*map).map_err(|e| e.to_string())?;
    if let (Some(want), Ok(Some(have))) = (&module.code_id, elf.build_id()) {
        let have: String = have.iter().map(|b| format!("{b:02x}")).collect();
        if !want.eq_ignore_ascii_case(&have) {
            return Err(format!(
                "{} on this machine is another build than the dump's",
                module.path
            ));
        }
    }
    let first = elf.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
    // One pass over the symbol tables for the four names.
    const NAMES: [&str; 4] = [
        "_PyRuntime",
        "PyCode_Type",
        "PyUnicode_Type",
        "PyBytes_Type",
    ];
    let mut found = [None; 4];
    for symbol in elf.dynamic_symbols().chain(elf.symbols()) {
        let Ok(name) = symbol.name() else { continue };
        if let Some(i) = NAMES.iter().position(|n| *n == name) {
            found[i].get_or_insert(
                module
                    .base
                    .wrapping_sub(first)
                    .wrapping_add(symbol.address()),
            );
        }
    }
    let get =
        |i: usize| found[i].ok_or_else(|| format!("{} has no {} symbol", module.path, NAMES[i]));
    Ok(Globals {
        runtime: get(0)?,
        code_type: get(1)?,
        str_type: get(2)?,
        bytes_type: get(3)?,
    })
}

/// The modules that are CPython interpreters, with their versions:
/// libpython first (an executable linked to it has no _PyRuntime).
fn interpreters(modules: &[LoadedModule]) -> Vec<(&LoadedModule, (u32, u32))> {
    let mut found: Vec<(&LoadedModule, (u32, u32))> = modules
        .iter()
        .filter_map(|m| version_of(&m.path).map(|v| (m, v)))
        .collect();
    found.sort_by_key(|(m, _)| !m.path.rsplit('/').next().unwrap_or("").starts_with("lib"));
    found
}

/// The interpreter's version and globals: kept in the dump by the capture
/// (so it needs no binary), else read from the interpreter's binary.
pub(crate) fn find_globals(
    modules: &[LoadedModule],
    memory: &dyn Memory,
) -> Option<Result<(Layout, Globals), String>> {
    if let Some((major, minor, globals)) = memory
        .read(GLOBALS_RECORD, 40)
        .and_then(|raw| Globals::from_record(&raw))
    {
        return Some(
            Layout::for_version(major, minor)
                .map(|layout| (layout, globals))
                .ok_or_else(|| format!("CPython {major}.{minor} is not read (3.10 to 3.13 are)")),
        );
    }
    let mut why = None;
    for (module, (major, minor)) in interpreters(modules) {
        let Some(layout) = Layout::for_version(major, minor) else {
            why = Some(format!(
                "CPython {major}.{minor}: its Python stacks are not read (3.10 to 3.13 are)"
            ));
            continue;
        };
        match globals(module) {
            Ok(globals) => return Some(Ok((layout, globals))),
            Err(e) => why = Some(e),
        }
    }
    why.map(Err)
}

/// Reads the Python state of the process, when one of its modules is a
/// CPython interpreter: (version, state), or why it could not be read.
pub(crate) fn read(
    modules: &[LoadedModule],
    memory: &dyn Memory,
) -> Option<Result<(String, PyState), String>> {
    Some(
        find_globals(modules, memory)?.and_then(|(layout, globals)| walk(&layout, globals, memory)),
    )
}

/// The walk of the interpreter state, once its layout and globals are known.
pub(crate) fn walk(
    layout: &Layout,
    globals: Globals,
    memory: &dyn Memory,
) -> Result<(String, PyState), String> {
    let walker = Walker {
        memory,
        layout,
        globals,
    };
    walker
        .state(globals.runtime)
        .map(|state| (layout.version(), state))
}

/// Adds the Python frames to `report`'s threads, the finalizing state as
/// exit evidence, and what could not be read as warnings.
pub(crate) fn annotate(report: &mut Report, modules: &[LoadedModule], memory: &dyn Memory) {
    let Some(result) = read(modules, memory) else {
        if free_threaded(modules) {
            report.warnings.push(
                "Python stacks not read: free-threaded CPython builds (3.13t) have other layouts"
                    .to_string(),
            );
        }
        return;
    };
    let (version, state) = match result {
        Ok(found) => found,
        Err(why) => {
            report
                .warnings
                .push(format!("Python stacks not read: {why}"));
            return;
        }
    };
    if state.finalizing && report.source.exit_evidence.is_none() {
        report.source.exit_evidence = Some(format!(
            "the CPython {version} runtime is finalizing (Py_Finalize began)"
        ));
    }
    let ids: Vec<u32> = report.threads.iter().map(|t| t.id).collect();
    let tids: Vec<Option<u32>> = state
        .threads
        .iter()
        .map(|py| py.native_id.filter(|id| ids.contains(id)))
        .collect();
    for (py, native) in state.threads.iter().zip(&tids) {
        let Some(thread) = report.threads.iter_mut().find(|t| *native == Some(t.id)) else {
            report.warnings.push(format!(
                "a Python thread (ident {:#x}, {} frames) is not one of the dump's threads",
                py.ident,
                py.frames.len()
            ));
            continue;
        };
        thread.holds_gil = py.holds_gil;
        // The name the program gave its thread, over the OS's.
        if py.name.is_some() {
            thread.name = py.name.clone();
        }
        if let Some(warning) = place(&mut thread.frames, py) {
            report
                .warnings
                .push(format!("thread {}: {warning}", thread.id));
        }
        if let Some(cut) = &py.cut {
            report.warnings.push(format!(
                "thread {}: its Python stack is cut: {cut}",
                thread.id
            ));
        }
    }
    // Which thread a join (Thread.join, threading._shutdown) waits for.
    joins::resolve(report, &state, &tids);
}

/// The evaluator: one native frame per run of Python frames (its inlined
/// wrapper `_PyEval_EvalFrame` is not counted).
const EVALUATOR: &str = "_PyEval_EvalFrameDefault";

/// Puts `py`'s frames among `frames`: each run (from an entry frame up)
/// above the evaluator frame that runs it. Returns a warning when the runs
/// and the evaluator frames do not pair up.
fn place(frames: &mut Vec<Frame>, py: &PyThread) -> Option<String> {
    if py.frames.is_empty() {
        return None;
    }
    let mut runs: Vec<Vec<Frame>> = vec![Vec::new()];
    for frame in &py.frames {
        runs.last_mut()
            .expect("one run at least")
            .push(python_frame(frame));
        if frame.entry {
            runs.push(Vec::new());
        }
    }
    if runs.last().is_some_and(Vec::is_empty) {
        runs.pop();
    }
    let evaluators: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.function.as_deref() == Some(EVALUATOR) && !f.function_guessed)
        .map(|(i, _)| i)
        .collect();
    let warning = if evaluators.len() == runs.len() {
        for (at, run) in evaluators.iter().zip(runs).rev() {
            frames.splice(*at..*at, run);
        }
        None
    } else {
        let at = evaluators.first().copied().unwrap_or(0);
        frames.splice(at..at, runs.into_iter().flatten());
        Some(format!(
            "its Python frames could not be paired with its native evaluator frames ({} native, \
             {} runs of Python frames): they are shown together",
            evaluators.len(),
            py.frames.iter().filter(|f| f.entry).count().max(1)
        ))
    };
    for (i, frame) in frames.iter_mut().enumerate() {
        frame.index = i;
    }
    warning
}

fn python_frame(py: &walk::PyFrame) -> Frame {
    Frame {
        function: Some(py.function.clone()),
        file: Some(py.file.clone()),
        line: py.line,
        trust: Trust::Interpreter,
        symbol_source: SymbolSource::None,
        kind: FrameKind::Python,
        ..Frame::from_text(0)
    }
}

/// For the fuzz target `read_python`: walks `data` as the memory of a
/// process whose runtime state starts at its first byte, with the type
/// objects at fixed places in it, with every version's layout. Bad input
/// must end each walk, never panic or hang.
#[doc(hidden)]
pub fn fuzz_walk(data: &[u8]) {
    const BASE: u64 = 0x1000_0000;
    struct Image<'a>(&'a [u8]);
    impl Memory for Image<'_> {
        fn read(&self, address: u64, len: usize) -> Option<Vec<u8>> {
            let at = usize::try_from(address.checked_sub(BASE)?).ok()?;
            self.0.get(at..at.checked_add(len)?).map(<[u8]>::to_vec)
        }
    }
    let globals = Globals {
        runtime: BASE,
        code_type: BASE + 0x10,
        str_type: BASE + 0x20,
        bytes_type: BASE + 0x30,
    };
    for minor in 10..=13 {
        let Some(layout) = Layout::for_version(3, minor) else {
            continue;
        };
        let walker = Walker {
            memory: &Image(data),
            layout: &layout,
            globals,
        };
        if let Ok(state) = walker.state(BASE) {
            let mut frames = Vec::new();
            for thread in &state.threads {
                let _ = place(&mut frames, thread);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without cargo-fuzz here: 3,000 deterministic mutations of the
    /// fuzz seed (one 3.11 thread) walked with every version's layout.
    #[test]
    fn mutated_memory_never_panics() {
        let seed = include_bytes!("../../fuzz/regressions/read_python/seed-one-thread-311.bin");
        let mut state = 0x9e37_79b9_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        fuzz_walk(seed);
        for _ in 0..3000 {
            let mut data = seed.to_vec();
            for _ in 0..=(next() % 6) {
                let at = (next() % data.len() as u64) as usize & !7;
                let value = match next() % 4 {
                    0 => next(),
                    1 => 0x1000_0000 + (next() % 0x700),
                    2 => u64::MAX - (next() % 64),
                    _ => 0,
                };
                data[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
            fuzz_walk(&data);
        }
    }

    #[test]
    fn versions_come_from_the_binary_names() {
        assert_eq!(version_of("/usr/bin/python3.11"), Some((3, 11)));
        assert_eq!(version_of("/opt/lib/libpython3.12.so.1.0"), Some((3, 12)));
        assert_eq!(
            version_of("/usr/lib/libpython3.13t.so"),
            None,
            "free-threaded"
        );
        assert!(free_threaded(&[LoadedModule {
            path: "/usr/bin/python3.13t".into(),
            base: 0,
            code_id: None,
        }]));
        assert_eq!(version_of("/usr/bin/python3"), None);
        assert_eq!(version_of("/usr/lib/libpythonista.so"), None);
    }

    #[test]
    fn every_supported_version_has_its_layout() {
        for minor in 10..=13 {
            let layout = Layout::for_version(3, minor).expect("offsets.toml has it");
            assert!(layout.get("code_filename").is_some());
            assert_eq!(layout.is_interpreter_frame(), minor >= 11);
        }
        assert!(Layout::for_version(3, 9).is_none());
    }
}
