//! `dumptriage signatures ...`: list, show, lint, test and document the
//! rule database.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use dumptriage::printable;
use dumptriage::signatures;

use crate::cli::SignaturesCommand;
use crate::{
    load_database, load_database_with_examples, print_problems, write_stdout, EXIT_FINDING,
    EXIT_INPUT_ERROR,
};

pub(crate) fn command(command: SignaturesCommand) -> anyhow::Result<ExitCode> {
    match command {
        SignaturesCommand::List(dirs) => {
            let db = load_database(&dirs.signatures)?;
            write_stdout(|out| {
                for rule in db.rules() {
                    let generic = if rule.generic { " (generic)" } else { "" };
                    writeln!(
                        out,
                        "{:<34} {:<5} {}{generic}",
                        rule.id,
                        rule.kind.as_str(),
                        rule.title
                    )?;
                }
                Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
        SignaturesCommand::Show { id, dirs } => {
            let db = load_database(&dirs.signatures)?;
            let Some(rule) = db.get(&id) else {
                bail!(
                    "no signature with id {:?} (see `dumptriage signatures list`)",
                    printable::clean(&id)
                );
            };
            write_stdout(|out| {
                writeln!(out, "# {}", rule.origin)?;
                out.write_all(rule.text.as_bytes())
            })?;
            Ok(ExitCode::SUCCESS)
        }
        SignaturesCommand::Lint { dir } => {
            let problems = match &dir {
                Some(dir) => signatures::lint_dir(dir),
                None => signatures::lint_builtin(),
            };
            print_problems(&problems);
            if problems.is_empty() {
                println!("ok: no problems");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("{} problem(s)", problems.len());
                Ok(ExitCode::from(EXIT_INPUT_ERROR))
            }
        }
        SignaturesCommand::Test { dir } => {
            let extra: Vec<_> = dir.iter().cloned().collect();
            let db = load_database_with_examples(&extra)?;
            let outcomes = db.test_examples(db.rules());
            let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
            write_stdout(|out| {
                for o in &outcomes {
                    match &o.failure {
                        None => writeln!(out, "ok    {}: {}", o.rule, o.example)?,
                        Some(why) => writeln!(out, "FAIL  {}: {}: {why}", o.rule, o.example)?,
                    }
                }
                writeln!(out, "{} passed, {failed} failed", outcomes.len() - failed)
            })?;
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FINDING)
            })
        }
        SignaturesCommand::Docs { dir, readme, check } => docs(&dir, readme.as_deref(), check),
    }
}

/// Writes, or checks, the generated documentation pages and, with
/// `--readme`, the table of rules in a README.
fn docs(dir: &Path, readme: Option<&Path>, check: bool) -> anyhow::Result<ExitCode> {
    let db = load_database_with_examples(&[])?;
    let pages = signatures::docs::pages(&db);
    let readme = match readme {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            // The pages' folder as the README links to it.
            let base = path.parent().unwrap_or(Path::new(""));
            let link = dir
                .strip_prefix(base)
                .unwrap_or(dir)
                .to_string_lossy()
                .replace('\\', "/");
            let new = signatures::docs::readme(&text, &db, &link)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            Some((path, text, new))
        }
    };
    if !check {
        signatures::docs::write(dir, &pages)?;
        println!("wrote {} pages to {}", pages.len(), dir.display());
        if let Some((path, _, new)) = &readme {
            std::fs::write(path, new)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote the table of rules in {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut stale = signatures::docs::check(dir, &pages);
    if let Some((path, old, new)) = &readme {
        if old != new {
            stale.push(format!(
                "{}: the table of rules is out of date",
                path.display()
            ));
        }
    }
    for problem in &stale {
        eprintln!("{problem}");
    }
    if stale.is_empty() {
        println!("ok: {} pages up to date", pages.len());
        Ok(ExitCode::SUCCESS)
    } else {
        let readme = readme
            .map(|(path, ..)| format!(" --readme {}", path.display()))
            .unwrap_or_default();
        eprintln!(
            "run `dumptriage signatures docs {}{readme}` to regenerate",
            dir.display()
        );
        Ok(ExitCode::from(EXIT_FINDING))
    }
}
