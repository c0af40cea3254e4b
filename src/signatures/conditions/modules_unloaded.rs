//! `modules_unloaded`: module patterns that must each match a module of the
//! unloaded-module list.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::pattern::{Case, Pattern};

pub(super) struct ModulesUnloaded;

impl Condition for ModulesUnloaded {
    type Spec = Vec<String>;
    type Compiled = Vec<Pattern>;
    const DOC: &'static str = "module patterns that must each match an unloaded module";

    fn compile(spec: &Vec<String>, cx: &mut Compiler<'_>) -> Option<Vec<Pattern>> {
        cx.patterns(spec, Case::Insensitive)
    }

    fn weight(patterns: &Vec<Pattern>) -> u32 {
        patterns.len() as u32
    }
}

impl OnDump for ModulesUnloaded {
    fn holds(patterns: &Vec<Pattern>, scene: &Scene<'_>, found: &mut Found) -> bool {
        for pattern in patterns {
            let Some(module) = scene
                .report
                .unloaded_modules
                .iter()
                .find(|m| pattern.matches(&m.name))
            else {
                return false;
            };
            found.fact(None, None, format!("{} was unloaded", module.name));
        }
        true
    }
}
