//! Which source file uses which, read from the text of the crate: a small
//! Rust reader of our own (a lexer, the module tree, `use` trees and the
//! paths in the code), enough to follow a name to the file that defines it.
//!
//! A file uses another when a name it writes resolves to an item defined
//! there: through `use` (grouped, renamed, `self`, globs), through
//! re-exports (`pub use`, `pub use x::*`) of the modules on the way, and
//! through paths written inline without `use` (`crate::a::f()`,
//! `super::b::T`, `child::g()`, `imported_module::h()`, in macro arguments
//! too). Serde's `with = "path"` attribute strings count as paths. Test
//! code (`#[cfg(test)]` items) is left out: it may reach anywhere.
//!
//! What it does not do: expand macros (a module whose items come from a
//! macro, such as `include!`, is opaque: names in it resolve to its file),
//! tell scopes inside a file apart (a `use` in a function body counts for
//! the whole module), or tell namespaces apart (a path that goes on is a
//! module or a type; a last segment prefers an item over a module).

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    Str(String),
    /// Numbers and character literals.
    Lit,
    Lifetime,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// The tokens of `text`, without comments; string contents kept.
fn lex(text: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        c: text.chars().collect(),
        i: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while lexer.i < lexer.c.len() {
        let line = lexer.line;
        if let Some(tok) = lexer.token() {
            out.push(Token { tok, line });
        }
    }
    out
}

struct Lexer {
    c: Vec<char>,
    i: usize,
    line: usize,
}

fn ident_start(ch: char) -> bool {
    ch.is_alphabetic() || ch == '_'
}

fn ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

impl Lexer {
    fn at(&self, i: usize) -> char {
        self.c.get(i).copied().unwrap_or('\0')
    }

    /// The token at `i` (None for whitespace and comments), moving past it.
    fn token(&mut self) -> Option<Tok> {
        let (ch, next) = (self.at(self.i), self.at(self.i + 1));
        let tok = match ch {
            '\n' => {
                self.line += 1;
                self.i += 1;
                return None;
            }
            _ if ch.is_whitespace() => {
                self.i += 1;
                return None;
            }
            '/' if next == '/' || next == '*' => {
                self.comment();
                return None;
            }
            '"' => Tok::Str(self.string(None)),
            '\'' => self.quote(),
            ':' if next == ':' => {
                self.i += 2;
                Tok::Sep
            }
            _ if ch.is_ascii_digit() => {
                while ident_char(self.at(self.i))
                    || (self.at(self.i) == '.' && self.at(self.i + 1).is_ascii_digit())
                {
                    self.i += 1;
                }
                Tok::Lit
            }
            _ if ident_start(ch) => self.word(),
            _ => {
                self.i += 1;
                Tok::Punct(ch)
            }
        };
        Some(tok)
    }

    /// A `//` comment to the end of its line, or a (nested) `/* */` one.
    fn comment(&mut self) {
        if self.at(self.i + 1) == '/' {
            while self.i < self.c.len() && self.c[self.i] != '\n' {
                self.i += 1;
            }
            return;
        }
        let mut depth = 0;
        while self.i < self.c.len() {
            if self.c[self.i] == '/' && self.at(self.i + 1) == '*' {
                depth += 1;
                self.i += 2;
            } else if self.c[self.i] == '*' && self.at(self.i + 1) == '/' {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.line += usize::from(self.c[self.i] == '\n');
                self.i += 1;
            }
        }
    }

    /// The contents of the string whose `"` is at `i`; raw (no escapes,
    /// ended by `"` and that many `#`) when `hashes` is Some.
    fn string(&mut self, hashes: Option<usize>) -> String {
        self.i += 1;
        let start = self.i;
        while self.i < self.c.len() {
            match self.c[self.i] {
                '\n' => self.line += 1,
                '\\' if hashes.is_none() => {
                    self.line += usize::from(self.at(self.i + 1) == '\n');
                    self.i += 1;
                }
                '"' => {
                    let n = hashes.unwrap_or(0);
                    if (1..=n).all(|k| self.at(self.i + k) == '#') {
                        let text = self.c[start..self.i].iter().collect();
                        self.i += 1 + n;
                        return text;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        self.c[start.min(self.c.len())..].iter().collect()
    }

    /// A character literal or a lifetime, from its `'`.
    fn quote(&mut self) -> Tok {
        if self.at(self.i + 1) == '\\' {
            self.i += 2;
            while self.i < self.c.len() && self.c[self.i] != '\'' {
                self.i += 1;
            }
            self.i += 1;
            Tok::Lit
        } else if self.at(self.i + 2) == '\'' {
            self.i += 3;
            Tok::Lit
        } else {
            self.i += 1;
            while ident_char(self.at(self.i)) {
                self.i += 1;
            }
            Tok::Lifetime
        }
    }

    /// An identifier, or a literal it prefixes (`r"..."`, `r#"..."#`,
    /// `b"..."`, `b'x'`), or a raw identifier (`r#type`).
    fn word(&mut self) -> Tok {
        let start = self.i;
        while ident_char(self.at(self.i)) {
            self.i += 1;
        }
        let word: String = self.c[start..self.i].iter().collect();
        let (next, after) = (self.at(self.i), self.at(self.i + 1));
        let raw = matches!(word.as_str(), "r" | "br" | "cr");
        if raw && (next == '"' || (next == '#' && matches!(after, '"' | '#'))) {
            let mut hashes = 0;
            while self.at(self.i) == '#' {
                hashes += 1;
                self.i += 1;
            }
            Tok::Str(self.string(Some(hashes)))
        } else if word == "r" && next == '#' && ident_start(after) {
            self.i += 1;
            let start = self.i;
            while ident_char(self.at(self.i)) {
                self.i += 1;
            }
            Tok::Ident(self.c[start..self.i].iter().collect())
        } else if matches!(word.as_str(), "b" | "c") && next == '"' {
            Tok::Str(self.string(None))
        } else if word == "b" && next == '\'' {
            self.i += 1;
            while self.i < self.c.len() && self.c[self.i] != '\'' {
                self.i += usize::from(self.c[self.i] == '\\') + 1;
            }
            self.i += 1;
            Tok::Lit
        } else {
            Tok::Ident(word)
        }
    }
}

/// One `use` binding: `name` stands for `path` (relative to its module);
/// `name` is `*` for a glob.
#[derive(Debug, Clone)]
struct Use {
    name: String,
    path: Vec<String>,
    public: bool,
    line: usize,
}

#[derive(Debug, Default)]
struct Module {
    file: String,
    parent: Option<usize>,
    /// Where the files of its `mod x;` children are (`a/b/`).
    dir: String,
    children: BTreeMap<String, usize>,
    /// Items defined here, and whether each is visible outside (`pub`).
    items: BTreeMap<String, bool>,
    uses: Vec<Use>,
    /// Items made by a macro here, invisible to this reader.
    opaque: bool,
}

/// A path written in the code (one segment for a bare name).
#[derive(Debug)]
struct Mention {
    module: usize,
    path: Vec<String>,
    line: usize,
}

/// Where a name leads.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Module(usize),
    /// An item, by the file that defines it.
    Item(String),
    /// Another crate (or a name this crate does not define).
    External,
}

/// The crate as this reader sees it.
#[derive(Debug, Default)]
pub struct Crate {
    modules: Vec<Module>,
    mentions: Vec<Mention>,
    /// `mod x;` without a file, and similar surprises.
    pub problems: Vec<String>,
}

/// One file's use of another, with where it is written.
#[derive(Debug, Clone)]
pub struct Edge {
    pub line: usize,
    pub path: String,
}

/// The files each file uses (its own file left out), by path under the root.
pub type Graph = BTreeMap<String, BTreeMap<String, Edge>>;

struct Parser<'a> {
    files: &'a BTreeMap<String, String>,
    krate: Crate,
}

impl Crate {
    /// Reads the crate whose root is `root` (`lib.rs`) from `files`
    /// (path under the crate's folder -> text).
    pub fn read(files: &BTreeMap<String, String>, root: &str) -> Crate {
        let mut parser = Parser {
            files,
            krate: Crate::default(),
        };
        parser.file_module(root, String::new(), None);
        parser.krate
    }

    /// Every file the parser reached through `mod` declarations.
    pub fn files(&self) -> BTreeSet<String> {
        self.modules.iter().map(|m| m.file.clone()).collect()
    }
}

fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

fn punct(tokens: &[Token], i: usize, ch: char) -> bool {
    matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::Punct(p)) if *p == ch)
}

/// The index after the group opened at `i` (`(`, `[` or `{`).
fn group_end(tokens: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < tokens.len() {
        match tokens[j].tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

impl Parser<'_> {
    fn new_module(&mut self, file: &str, dir: String, parent: Option<usize>) -> usize {
        self.krate.modules.push(Module {
            file: file.to_string(),
            parent,
            dir,
            ..Module::default()
        });
        self.krate.modules.len() - 1
    }

    fn file_module(&mut self, file: &str, dir: String, parent: Option<usize>) -> usize {
        let id = self.new_module(file, dir, parent);
        let tokens = lex(&self.files[file]);
        self.items(&tokens, 0, tokens.len(), id);
        id
    }

    /// The items of module `m` in `tokens[start..end]`.
    fn items(&mut self, tokens: &[Token], start: usize, end: usize, m: usize) {
        let mut i = start;
        while i < end {
            // Attributes: `#[cfg(test)]` drops the item, `#![cfg(test)]`
            // the rest of the module; serde's `with` strings are paths.
            let mut test_only = false;
            while punct(tokens, i, '#') {
                let inner = punct(tokens, i + 1, '!');
                let open = i + 1 + usize::from(inner);
                let close = group_end(tokens, open);
                let attr = &tokens[open..close.min(end)];
                if is_cfg_test(attr) {
                    if inner {
                        return;
                    }
                    test_only = true;
                }
                self.attribute_paths(attr, m);
                i = close;
            }
            if i >= end {
                break;
            }
            let mut public = false;
            if ident(tokens, i) == Some("pub") {
                public = true;
                i += 1;
                if punct(tokens, i, '(') {
                    i = group_end(tokens, i);
                }
            }
            while matches!(
                ident(tokens, i),
                Some("unsafe" | "async" | "default" | "extern")
            ) || (ident(tokens, i) == Some("const")
                && matches!(
                    ident(tokens, i + 1),
                    Some("fn" | "unsafe" | "async" | "extern")
                ))
            {
                i += 1;
                if matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::Str(_))) {
                    i += 1;
                }
            }
            let line = tokens.get(i).map_or(0, |t| t.line);
            match ident(tokens, i) {
                Some("use") => {
                    let (next, uses) = use_declaration(tokens, i + 1, public, line);
                    if !test_only {
                        self.krate.modules[m].uses.extend(uses);
                    }
                    i = next;
                }
                Some("mod") => {
                    let name = ident(tokens, i + 1).unwrap_or_default().to_string();
                    if punct(tokens, i + 2, '{') {
                        let close = group_end(tokens, i + 2);
                        if !test_only {
                            let child = self.inline_module(m, &name);
                            self.items(tokens, i + 3, close - 1, child);
                        }
                        i = close;
                    } else {
                        if !test_only {
                            self.child_file(m, &name);
                        }
                        i += 3;
                    }
                }
                Some("macro_rules") => {
                    let name = ident(tokens, i + 2).unwrap_or_default().to_string();
                    self.krate.modules[m].items.insert(name, public);
                    i = self.body(tokens, i, end, m, true, test_only);
                }
                Some(
                    kind @ ("fn" | "struct" | "enum" | "union" | "trait" | "type" | "const"
                    | "static"),
                ) => {
                    let skip = usize::from(ident(tokens, i + 1) == Some("mut"));
                    let name = ident(tokens, i + 1 + skip).unwrap_or("_").to_string();
                    if !test_only && name != "_" {
                        self.krate.modules[m].items.insert(name, public);
                    }
                    let braces = !matches!(kind, "type" | "const" | "static");
                    i = self.body(tokens, i + 2 + skip, end, m, braces, test_only);
                }
                Some(_) if punct(tokens, i + 1, '!') => {
                    // An item made by a macro (`include!(...)`).
                    self.krate.modules[m].opaque |= !test_only;
                    i = self.body(tokens, i, end, m, true, test_only);
                }
                _ => i = self.body(tokens, i, end, m, true, test_only),
            }
        }
    }

    fn inline_module(&mut self, m: usize, name: &str) -> usize {
        // `#[cfg(unix)] mod imp {..}` and `#[cfg(windows)] mod imp {..}`
        // are one module here.
        if let Some(&child) = self.krate.modules[m].children.get(name) {
            return child;
        }
        let file = self.krate.modules[m].file.clone();
        let dir = format!("{}{name}/", self.krate.modules[m].dir);
        let child = self.new_module(&file, dir, Some(m));
        self.krate.modules[m]
            .children
            .insert(name.to_string(), child);
        child
    }

    fn child_file(&mut self, m: usize, name: &str) {
        let dir = format!("{}{name}/", self.krate.modules[m].dir);
        let candidates = [
            format!("{}{name}.rs", self.krate.modules[m].dir),
            format!("{dir}mod.rs"),
        ];
        match candidates.iter().find(|f| self.files.contains_key(*f)) {
            Some(file) => {
                let child = self.file_module(file, dir, Some(m));
                self.krate.modules[m]
                    .children
                    .insert(name.to_string(), child);
            }
            None => self.krate.problems.push(format!(
                "{}: `mod {name};` but neither {} nor {} exists",
                self.krate.modules[m].file, candidates[0], candidates[1]
            )),
        }
    }

    /// Paths in serde's `with`, `serialize_with`, `deserialize_with` and
    /// `default` strings.
    fn attribute_paths(&mut self, attr: &[Token], m: usize) {
        for w in attr.windows(3) {
            if let (Tok::Ident(key), Tok::Punct('='), Tok::Str(value)) =
                (&w[0].tok, &w[1].tok, &w[2].tok)
            {
                let keyed = matches!(
                    key.as_str(),
                    "with" | "serialize_with" | "deserialize_with" | "default"
                );
                let path_like = !value.is_empty()
                    && value.split("::").all(|s| {
                        s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.is_empty()
                    });
                if keyed && path_like {
                    self.krate.mentions.push(Mention {
                        module: m,
                        path: value.split("::").map(str::to_string).collect(),
                        line: w[2].line,
                    });
                }
            }
        }
    }

    /// Reads the rest of an item from `i` to its end (a `;` outside any
    /// group, or, when `braces`, the `}` of its first `{...}` group):
    /// its `use` declarations and the paths it writes. Returns the index
    /// after it.
    fn body(
        &mut self,
        tokens: &[Token],
        mut i: usize,
        end: usize,
        m: usize,
        braces: bool,
        test_only: bool,
    ) -> usize {
        let mut depth = 0usize;
        while i < end {
            match &tokens[i].tok {
                Tok::Punct(';') if depth == 0 => return i + 1,
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && braces {
                        return i + 1;
                    }
                }
                Tok::Ident(word) if word == "use" => {
                    let (next, uses) = use_declaration(tokens, i + 1, false, tokens[i].line);
                    if !test_only {
                        self.krate.modules[m].uses.extend(uses);
                    }
                    i = next;
                    continue;
                }
                Tok::Ident(word) if word == "pub" && punct(tokens, i + 1, '(') => {
                    // `pub(in crate::a)` names a module, it does not use it.
                    i = group_end(tokens, i + 1);
                    continue;
                }
                Tok::Ident(_) => {
                    let after_dot = i > 0 && punct(tokens, i - 1, '.');
                    let after_sep = i > 0 && tokens[i - 1].tok == Tok::Sep;
                    let (next, path) = path_at(tokens, i);
                    if !test_only && !after_dot && !after_sep {
                        self.krate.mentions.push(Mention {
                            module: m,
                            path,
                            line: tokens[i].line,
                        });
                    }
                    i = next;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        end
    }
}

fn is_cfg_test(attr: &[Token]) -> bool {
    let words: Vec<&str> = attr
        .iter()
        .filter_map(|t| match &t.tok {
            Tok::Ident(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    words.first() == Some(&"cfg") && words.contains(&"test") && !words.contains(&"not")
}

/// The path starting at identifier `i`: `a::b::c`, stopping before a
/// turbofish. Returns the index after it.
fn path_at(tokens: &[Token], mut i: usize) -> (usize, Vec<String>) {
    let mut path = Vec::new();
    while let Some(word) = ident(tokens, i) {
        path.push(word.to_string());
        i += 1;
        if tokens.get(i).map(|t| &t.tok) == Some(&Tok::Sep) && ident(tokens, i + 1).is_some() {
            i += 1;
        } else {
            break;
        }
    }
    (i, path)
}

/// The bindings of a `use` declaration whose tree starts at `i`; returns
/// the index after its `;`.
fn use_declaration(tokens: &[Token], mut i: usize, public: bool, line: usize) -> (usize, Vec<Use>) {
    let mut out = Vec::new();
    if tokens.get(i).map(|t| &t.tok) == Some(&Tok::Sep) {
        // `use ::std::...`: another crate.
        i += 1;
        i = use_tree(tokens, i, vec!["::".to_string()], &mut Vec::new());
    } else {
        i = use_tree(tokens, i, Vec::new(), &mut out);
    }
    while i < tokens.len() && !punct(tokens, i, ';') {
        i += 1;
    }
    let uses = out
        .into_iter()
        .map(|(name, path)| Use {
            name,
            path,
            public,
            line,
        })
        .collect();
    (i + 1, uses)
}

/// One use tree at `i` under `prefix`, adding (name, path) bindings to `out`.
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(String, Vec<String>)>,
) -> usize {
    loop {
        if punct(tokens, i, '{') {
            i += 1;
            while i < tokens.len() && !punct(tokens, i, '}') {
                i = use_tree(tokens, i, prefix.clone(), out);
                if punct(tokens, i, ',') {
                    i += 1;
                }
            }
            return i + 1;
        }
        if punct(tokens, i, '*') {
            out.push(("*".to_string(), prefix));
            return i + 1;
        }
        let Some(word) = ident(tokens, i) else {
            return i;
        };
        i += 1;
        if tokens.get(i).map(|t| &t.tok) == Some(&Tok::Sep) {
            prefix.push(word.to_string());
            i += 1;
            continue;
        }
        let (name, path) = if word == "self" {
            (prefix.last().cloned().unwrap_or_default(), prefix)
        } else {
            prefix.push(word.to_string());
            (word.to_string(), prefix)
        };
        if ident(tokens, i) == Some("as") {
            let alias = ident(tokens, i + 1).unwrap_or("_").to_string();
            out.push((alias, path));
            return i + 2;
        }
        out.push((name, path));
        return i;
    }
}

impl Crate {
    /// Where `path`, written in module `m`, leads; `Err` names the segment
    /// that leads nowhere.
    fn resolve(&self, m: usize, path: &[String], depth: usize) -> Result<Target, String> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(Target::Module(m));
        };
        if depth > 16 {
            return Err(format!("{} (re-exports go round)", path.join("::")));
        }
        let mut target = match first.as_str() {
            "crate" => Target::Module(0),
            "self" => Target::Module(m),
            "super" => self.modules[m]
                .parent
                .map_or(Target::External, Target::Module),
            "Self" => Target::Item(self.modules[m].file.clone()),
            "::" => Target::External,
            name => self
                .lookup(m, name, rest.is_empty(), false, depth)
                .unwrap_or(Target::External),
        };
        for (k, segment) in rest.iter().enumerate() {
            let Target::Module(here) = target else { break };
            let last = k + 1 == rest.len();
            target = match segment.as_str() {
                "super" => self.modules[here]
                    .parent
                    .map_or(Target::External, Target::Module),
                "self" => Target::Module(here),
                _ => match self.lookup(here, segment, last, false, depth) {
                    Some(found) => found,
                    None if self.modules[here].opaque => {
                        Target::Item(self.modules[here].file.clone())
                    }
                    None => {
                        return Err(format!(
                            "{} ({segment} is not in {})",
                            path.join("::"),
                            self.modules[here].file
                        ))
                    }
                },
            };
        }
        Ok(target)
    }

    /// `name` in module `m`: a child module, an item, a `use` binding or
    /// what a glob brings (only `pub` names when `public_only`).
    fn lookup(
        &self,
        m: usize,
        name: &str,
        last: bool,
        public_only: bool,
        depth: usize,
    ) -> Option<Target> {
        let module = &self.modules[m];
        let child = module.children.get(name).map(|&c| Target::Module(c));
        let item = module
            .items
            .get(name)
            .filter(|public| **public || !public_only)
            .map(|_| Target::Item(module.file.clone()));
        let found = if last { item.or(child) } else { child.or(item) };
        if found.is_some() {
            return found;
        }
        for binding in module
            .uses
            .iter()
            .filter(|u| u.name == name && (u.public || !public_only))
        {
            if let Ok(target) = self.resolve(m, &binding.path, depth + 1) {
                return Some(target);
            }
        }
        for glob in module
            .uses
            .iter()
            .filter(|u| u.name == "*" && (u.public || !public_only))
        {
            match self.resolve(m, &glob.path, depth + 1) {
                Ok(Target::Module(source)) if source != m => {
                    if let Some(found) = self.lookup(source, name, last, true, depth + 1) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Which file uses which, and the paths that lead nowhere.
    pub fn graph(&self) -> (Graph, Vec<String>) {
        let mut graph: Graph = self
            .files()
            .into_iter()
            .map(|f| (f, BTreeMap::new()))
            .collect();
        let mut unresolved = Vec::new();
        let mut add = |from: &str, to: &str, line: usize, path: &[String]| {
            if from != to {
                graph
                    .entry(from.to_string())
                    .or_default()
                    .entry(to.to_string())
                    .or_insert(Edge {
                        line,
                        path: path.join("::"),
                    });
            }
        };
        // The modules each module's globs read from.
        let mut globs: Vec<Vec<usize>> = vec![Vec::new(); self.modules.len()];
        for (m, module) in self.modules.iter().enumerate() {
            for binding in &module.uses {
                match self.resolve(m, &binding.path, 0) {
                    Ok(Target::Item(file)) => add(&module.file, &file, binding.line, &binding.path),
                    Ok(Target::Module(source)) if binding.name == "*" => globs[m].push(source),
                    Ok(_) => {}
                    Err(why) => {
                        unresolved.push(format!("{}:{}: use {why}", module.file, binding.line))
                    }
                }
            }
        }
        for mention in &self.mentions {
            let module = &self.modules[mention.module];
            if mention.path.len() > 1 || mention.path[0] == "Self" {
                match self.resolve(mention.module, &mention.path, 0) {
                    Ok(Target::Item(file)) => add(&module.file, &file, mention.line, &mention.path),
                    Ok(_) => {}
                    Err(why) => unresolved.push(format!("{}:{}: {why}", module.file, mention.line)),
                }
                continue;
            }
            // A bare name: only a glob import brings one unannounced.
            let name = &mention.path[0];
            if globs[mention.module].is_empty()
                || module.items.contains_key(name)
                || module.children.contains_key(name)
                || module.uses.iter().any(|u| &u.name == name)
            {
                continue;
            }
            let found = globs[mention.module]
                .iter()
                .find_map(|&source| self.lookup(source, name, true, true, 0));
            if let Some(Target::Item(file)) = found {
                add(&module.file, &file, mention.line, &mention.path);
            }
        }
        unresolved.sort();
        unresolved.dedup();
        (graph, unresolved)
    }
}

/// The groups of files that reach themselves (strongly connected
/// components of more than one file), each sorted, in file order.
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm.
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found.sort();
    state.found
}

/// Each circle with its files and the uses that close it.
pub fn describe(graph: &Graph, circles: &[Vec<String>]) -> String {
    let mut out = String::new();
    for group in circles {
        out.push_str(&format!(
            "circle of {} files: {}\n",
            group.len(),
            group.join(", ")
        ));
        for from in group {
            for (to, edge) in &graph[from] {
                if group.contains(to) {
                    out.push_str(&format!(
                        "  {from}:{} uses {to} ({})\n",
                        edge.line, edge.path
                    ));
                }
            }
        }
    }
    out
}
