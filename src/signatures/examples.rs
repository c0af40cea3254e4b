//! A rule's inline examples: hand-written stacks turned into reports, so
//! every rule is tested without a dump.
//!
//! A frame is written `MODULE!FUNCTION`, `MODULE` (no symbols), `!FUNCTION`
//! (no module), or `unloaded:MODULE` (an address in an unloaded module).

use std::collections::BTreeSet;

use super::exception::ExceptionCode;
use super::schema::{ExampleSpec, ExampleThread, Expect};
use crate::model::{
    Capture, CaptureReason, Exception, Frame, Module, ModuleSymbols, Process, Report, StackHit,
    SymbolSource, System, Thread, Trust, UnloadedModule,
};

/// The source of an example that names the messages of a text log: a text
/// report holding them, with the exit evidence they give by themselves.
fn said_source(said: &[super::conditions::SaidSpec]) -> crate::model::Source {
    if said.is_empty() {
        return crate::model::Source::default();
    }
    let messages: Vec<crate::model::Message> = said
        .iter()
        .enumerate()
        .map(|(i, said)| crate::model::Message {
            kind: said.kind(),
            line: i + 1,
            text: said.text().unwrap_or(said.kind().name()).to_string(),
            meaning: None,
        })
        .collect();
    crate::model::Source {
        kind: crate::model::SourceKind::Text,
        format: Some("messages".to_string()),
        line: Some(1),
        exit_evidence: crate::model::exit_said(&messages),
        exit_suggested: None,
        exit_ruled_out: None,
        messages,
        messages_only: false,
    }
}

/// Builds the report an example describes (before exit-phase classification).
pub(crate) fn to_report(example: &ExampleSpec) -> Result<Report, String> {
    let windows = match example.os.as_str() {
        "windows" => true,
        "linux" | "macos" => false,
        other => return Err(format!("os {other:?} is not windows, linux or macos")),
    };
    let mut loaded: BTreeSet<String> = example.modules.iter().cloned().collect();
    let mut unloaded: BTreeSet<String> = example.unloaded_modules.iter().cloned().collect();
    // The module an access fault's data address lies in.
    let access = example
        .access
        .as_deref()
        .map(|text| match text.strip_prefix("unloaded:") {
            Some(name) => (true, name.to_string()),
            None => (false, text.to_string()),
        });
    match &access {
        Some((true, name)) => {
            unloaded.insert(name.clone());
        }
        Some((false, name)) => {
            loaded.insert(name.clone());
        }
        None => {}
    }
    let mut threads = Vec::new();
    let mut ids = BTreeSet::new();
    for (t, spec) in example.threads.iter().enumerate() {
        if !ids.insert(spec.id) {
            return Err(format!("threads[{t}]: thread id {} appears twice", spec.id));
        }
        threads.push(example_thread(t, spec, &mut loaded, &mut unloaded)?);
    }
    let mut exception = example_exception(example)?;
    if let (Some(exception), Some((is_unloaded, name))) = (&mut exception, &access) {
        let (list, first) = if *is_unloaded {
            (&unloaded, 100)
        } else {
            (&loaded, 0)
        };
        let index = list.iter().position(|m| m == name).unwrap_or(0);
        exception.access_address = Some(base(first + index) + 0x2000);
    } else if access.is_some() {
        return Err("access needs an exception".to_string());
    }
    Ok(Report {
        process: Some(Process::default()),
        system: Some(System {
            os: if windows { "Windows NT" } else { "Linux" }.to_string(),
            os_version: None,
            cpu: "amd64".to_string(),
            cpu_info: None,
            cpu_count: 1,
        }),
        exception,
        threads,
        modules: loaded.into_iter().enumerate().map(loaded_module).collect(),
        unloaded_modules: unloaded
            .into_iter()
            .enumerate()
            .map(unloaded_module)
            .collect(),
        capture: example.captured.map(capture),
        ..Report::new(String::new(), said_source(&example.said))
    })
}

/// Where the example's `i`th module is loaded (unloaded ones from 100 on).
fn base(i: usize) -> u64 {
    0x1000_0000 * (i as u64 + 1)
}

/// The example's thread number `t`: its frames and stack-search hits, the
/// modules they name added to `loaded` and `unloaded`.
fn example_thread(
    t: usize,
    spec: &ExampleThread,
    loaded: &mut BTreeSet<String>,
    unloaded: &mut BTreeSet<String>,
) -> Result<Thread, String> {
    let mut frames = Vec::new();
    for (index, text) in spec.frames.iter().enumerate() {
        let frame =
            parse_frame(index, text).map_err(|e| format!("threads[{t}].frames[{index}]: {e}"))?;
        if let Some(m) = &frame.module {
            loaded.insert(m.clone());
        }
        if let Some(m) = &frame.unloaded_module {
            unloaded.insert(m.clone());
        }
        frames.push(frame);
    }
    let mut stack_search = Vec::new();
    for (i, text) in spec.stack.iter().enumerate() {
        let Some((module, function)) = text
            .split_once('!')
            .filter(|(m, f)| !m.is_empty() && !f.is_empty())
        else {
            return Err(format!(
                "threads[{t}].stack[{i}]: {text:?} is not MODULE!FUNCTION"
            ));
        };
        loaded.insert(module.to_string());
        stack_search.push(StackHit {
            stack_offset: 0x1000 + 0x100 * i as u64,
            below_walk: true,
            address: 0x5000 + i as u64,
            module: module.to_string(),
            function: function.to_string(),
            function_offset: 0x20,
            symbol_source: SymbolSource::Sym,
        });
    }
    Ok(Thread {
        name: spec.name.clone(),
        crashing: spec.crashing,
        wait: spec.waits_for.as_ref().map(|w| crate::model::Wait {
            kind: w.kind,
            address: Some(0x5000_0000 + u64::from(spec.id) * 0x40),
            holder: w.holder,
            gone_owner: None,
            found: None,
            in_module: None,
            note: None,
        }),
        stack_search,
        frames,
        ..Thread::new(spec.id)
    })
}

/// The example's exception, on its one crashing thread; an exception needs
/// a crashing thread and a crashing thread an exception.
fn example_exception(example: &ExampleSpec) -> Result<Option<Exception>, String> {
    let crashing: Vec<u32> = example
        .threads
        .iter()
        .filter(|t| t.crashing)
        .map(|t| t.id)
        .collect();
    match (&example.exception, crashing.as_slice()) {
        (None, []) => Ok(None),
        (Some(text), [thread_id]) => {
            let code = ExceptionCode::parse(text)?;
            Ok(Some(Exception {
                code: code.code,
                name: code.written.clone(),
                address: 0,
                access_address: None,
                parameters: Vec::new(),
                abort: None,
                cpp_type: example.cpp_type.clone(),
                cpp_in_flight: example.cpp_in_flight.clone().map(|cpp_type| {
                    crate::model::CppInFlight {
                        cpp_type,
                        record_address: 0,
                    }
                }),
                thread_id: *thread_id,
                crash: true,
                not_a_crash: None,
                ip_in_no_module: false,
            }))
        }
        (Some(_), _) => {
            Err("an exception needs exactly one thread with crashing = true".to_string())
        }
        (None, _) => Err("a crashing thread needs an exception".to_string()),
    }
}

/// The example's `i`th loaded module, with symbols.
fn loaded_module((i, name): (usize, String)) -> Module {
    Module {
        path: name.clone(),
        name,
        base: base(i),
        size: 0x10_0000,
        version: None,
        debug_file: None,
        debug_id: None,
        code_id: None,
        symbols: ModuleSymbols::Loaded,
        symbol_source: SymbolSource::Sym,
        symbol_file: None,
        symbols_tried: Vec::new(),
        unwind_info: None,
    }
}

/// The example's `i`th unloaded module.
fn unloaded_module((i, name): (usize, String)) -> UnloadedModule {
    UnloadedModule {
        path: name.clone(),
        name,
        base: base(100 + i),
        size: 0x10_0000,
        code_id: None,
        symbol_source: SymbolSource::None,
    }
}

/// How an example that says it was captured was captured.
fn capture(reason: CaptureReason) -> Capture {
    Capture {
        reason,
        after_seconds: (reason != CaptureReason::Attach).then_some(60.0),
        signal: None,
        command: vec!["example".to_string()],
        pid: 1,
        root_pid: None,
        root_command: None,
        tool: "signatures test".to_string(),
        kept: None,
    }
}

fn parse_frame(index: usize, text: &str) -> Result<Frame, String> {
    let text = text.trim();
    // `py:FILE!FUNCTION`: a Python frame, as a text trace gives it.
    if let Some(python) = text.strip_prefix("py:") {
        let Some((file, function)) = python.rsplit_once('!') else {
            return Err(format!("{text:?}: a Python frame is py:FILE!FUNCTION"));
        };
        let mut frame = Frame::from_text(index);
        frame.kind = crate::model::FrameKind::Python;
        frame.file = Some(file.to_string());
        frame.function = Some(function.to_string());
        frame.line = Some(1);
        return Ok(frame);
    }
    let (module, function, unloaded) = if let Some(name) = text.strip_prefix("unloaded:") {
        (None, None, Some(name.to_string()))
    } else if let Some((module, function)) = text.split_once('!') {
        let module = (!module.is_empty()).then(|| module.to_string());
        (module, Some(function.to_string()), None)
    } else {
        (Some(text.to_string()), None, None)
    };
    // `MODULE!~FUNCTION`: the name is only the nearest export before the
    // address, a guess.
    let guessed = function.as_deref().is_some_and(|f| f.starts_with('~'));
    let function = function.map(|f| f.trim_start_matches('~').to_string());
    if [&module, &function, &unloaded]
        .iter()
        .all(|p| p.as_deref().is_none_or(str::is_empty))
    {
        return Err(format!("{text:?} names neither a module nor a function"));
    }
    Ok(Frame {
        index,
        function_guessed: guessed,
        instruction: 0x1000 + index as u64,
        module_offset: module.as_ref().map(|_| 0x1000),
        function_offset: function.as_ref().map(|_| 0x10),
        symbol_source: if function.is_some() {
            SymbolSource::Sym
        } else {
            SymbolSource::None
        },
        unloaded_module_offset: unloaded.as_ref().map(|_| 0x1000),
        module,
        function,
        file: None,
        line: None,
        trust: if index == 0 {
            Trust::Context
        } else {
            Trust::Cfi
        },
        unloaded_module: unloaded,
        inlines: Vec::new(),
        kind: Default::default(),
    })
}

pub(super) fn check_examples(examples: &[ExampleSpec], report: &mut dyn FnMut(&str, String)) {
    let positives = examples
        .iter()
        .filter(|e| e.expect == Expect::Match)
        .count();
    if positives == 0 {
        report(
            "examples",
            "at least one example with expect = \"match\" is required".to_string(),
        );
    }
    if positives == examples.len() {
        report(
            "examples",
            "at least one example with expect = \"no-match\" is required".to_string(),
        );
    }
    for (i, example) in examples.iter().enumerate() {
        if let Err(e) = to_report(example) {
            report(&format!("examples[{i}]"), e);
        }
    }
}
