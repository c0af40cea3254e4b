//! `modules_loaded`: module patterns that must each match a loaded module.

use super::condition::{Compiler, Condition, OnDump, Scene};
use super::found::Found;
use crate::pattern::{Case, Pattern};

pub(super) struct ModulesLoaded;

impl Condition for ModulesLoaded {
    type Spec = Vec<String>;
    type Compiled = Vec<Pattern>;
    const DOC: &'static str = "module patterns that must each match a loaded module";
    const LABEL_RANK: u8 = 13;

    fn compile(spec: &Vec<String>, cx: &mut Compiler<'_>) -> Option<Vec<Pattern>> {
        cx.patterns(spec, Case::Insensitive)
    }

    fn weight(patterns: &Vec<Pattern>) -> u32 {
        patterns.len() as u32
    }

    fn label(spec: &Vec<String>) -> Option<String> {
        (!spec.is_empty()).then(|| format!("loaded {}", spec.join(", ")))
    }
}

impl OnDump for ModulesLoaded {
    fn holds(patterns: &Vec<Pattern>, scene: &Scene<'_>, found: &mut Found) -> bool {
        for pattern in patterns {
            let Some(module) = scene
                .report
                .modules
                .iter()
                .find(|m| pattern.matches(&m.name))
            else {
                return false;
            };
            found.fact(None, None, format!("{} is loaded", module.name));
        }
        true
    }
}
