//! The end of a dump's text report: the registers of the crashing thread,
//! the module list (a debugger's `lm`), and what the symbol search could
//! not do.

use std::fmt::Write as _;

use crate::model::{ModuleSymbols, Report, SymbolSource, Thread};
use crate::printable::clean;

/// Registers per line.
const REGISTERS_PER_LINE: usize = 4;

/// The crashing thread's registers, under its stack.
pub(super) fn render_registers(s: &mut String, thread: &Thread) {
    if thread.registers.is_empty() {
        return;
    }
    let width = thread
        .registers
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    // A 32-bit CPU's registers (x86's eip, ARM's pc with 32-bit values) in
    // 8 digits, a 64-bit one's in 16.
    let wide = thread
        .registers
        .iter()
        .any(|(_, v)| *v > u64::from(u32::MAX))
        || !thread
            .registers
            .iter()
            .any(|(n, _)| n == "eip" || n == "pc");
    let digits = if wide { 18 } else { 10 };
    let _ = writeln!(s, "    Registers:");
    for row in thread.registers.chunks(REGISTERS_PER_LINE) {
        let cells: Vec<String> = row
            .iter()
            .map(|(name, value)| format!("{:>width$} = {value:#0digits$x}", clean(name)))
            .collect();
        let _ = writeln!(s, "      {}", cells.join("  "));
    }
}

pub(super) fn render_modules(s: &mut String, report: &Report) {
    render_loaded(s, report);
    let missing: Vec<_> = report
        .modules
        .iter()
        .filter(|m| {
            matches!(
                m.symbols,
                ModuleSymbols::Missing | ModuleSymbols::Mismatched | ModuleSymbols::Corrupt
            )
        })
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(s, "\nModules without symbols:");
        for m in missing {
            let why = match m.symbols {
                ModuleSymbols::Mismatched => "only files of another build were found",
                ModuleSymbols::Corrupt => "corrupt symbol file",
                _ => "not found",
            };
            let _ = writeln!(s, "    {}: {why}", clean(&m.name));
            for tried in &m.symbols_tried {
                let _ = writeln!(s, "        tried {}", clean(tried));
            }
        }
    }
    let exports: Vec<_> = report
        .modules
        .iter()
        .filter(|m| m.symbol_source == SymbolSource::Exports)
        .collect();
    if !exports.is_empty() {
        let _ = writeln!(
            s,
            "\nModules named from export tables only (a frame may get the nearest exported name):"
        );
        for m in exports {
            let from = m.symbol_file.as_deref().map(clean).unwrap_or_default();
            let _ = writeln!(s, "    {}: {from}", clean(&m.name));
        }
    }
    let unwound: Vec<_> = report
        .modules
        .iter()
        .filter_map(|m| Some((m, m.unwind_info.as_deref()?)))
        .collect();
    if !unwound.is_empty() {
        let _ = writeln!(
            s,
            "\nUnwound from the binaries' own unwind tables (no .sym file):"
        );
        for (m, from) in unwound {
            let _ = writeln!(s, "    {}: {}", clean(&m.name), clean(from));
        }
    }
    if !report.unloaded_modules.is_empty() {
        let _ = writeln!(s, "\nUnloaded modules:");
        for m in &report.unloaded_modules {
            let _ = writeln!(
                s,
                "    {} at {:#x} ({} bytes)",
                clean(&m.name),
                m.base,
                m.size
            );
        }
    }
}

/// Every loaded module, by address: range, name, version, where its
/// symbols came from.
fn render_loaded(s: &mut String, report: &Report) {
    if report.modules.is_empty() {
        return;
    }
    let _ = writeln!(s, "\nLoaded modules:");
    for m in &report.modules {
        let end = m.base.saturating_add(m.size);
        let version = m
            .version
            .as_deref()
            .map(|v| format!(" {}", clean(v)))
            .unwrap_or_default();
        let symbols = match (m.symbols, m.symbol_source) {
            (ModuleSymbols::NotNeeded, _) => "symbols not needed".to_string(),
            (_, SymbolSource::None) => "no symbols".to_string(),
            (_, source) => format!("symbols: {}", source.describe()),
        };
        let _ = writeln!(
            s,
            "    {:#018x} - {end:#018x}  {}{version}  ({symbols})",
            m.base,
            clean(&m.name)
        );
    }
}
