//! `cargo xtask arch`: the yardsticks of issue 34 ("one table per kind, one pass down"), read
//! from a checkout's sources with no build: module pairs that import each other, branches on a
//! kind variant outside the kind tables, hand-written wait loops in tests, the sizes of
//! `verifier.rs` and `config.rs`, the I/O left in `config.rs`, and the concepts written two or
//! three times. `xtask/tests/architecture` holds the ratchets on these numbers.
//!
//! The scans are ports of the planner's scripts (`modcycles.py`, `kindmatches.py`,
//! `deadline_loops.py` and the greps of `measure.sh`), matched on the same checkout so the
//! numbers before and after the redesign are counted the same way. They read text, not a
//! syntax tree: comments and string literals are blanked first (lines kept), `#[cfg(test)]`
//! items are left out where the question is about shipped code.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use regex::Regex;

/// A file that could not be read.
#[derive(Debug)]
pub struct Unreadable {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for Unreadable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn read(path: &Path) -> Result<String, Unreadable> {
    std::fs::read_to_string(path).map_err(|source| Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, Unreadable> {
    let entries = std::fs::read_dir(dir).map_err(|source| Unreadable {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    Ok(paths)
}

/// The `.rs` files under `dir`: a folder's files (sorted) before its subfolders (sorted), as
/// `os.walk` lists them; folders named `target` skipped. Nothing when `dir` does not exist.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, Unreadable> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let mut subdirs = Vec::new();
    for path in read_dir_sorted(dir)? {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                subdirs.push(path);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    for sub in subdirs {
        out.extend(rust_files(&sub)?);
    }
    Ok(out)
}

/// The crates of the workspace: `crates/NAME` folders, sorted.
fn crate_dirs(root: &Path) -> Result<Vec<PathBuf>, Unreadable> {
    Ok(read_dir_sorted(&root.join("crates"))?
        .into_iter()
        .filter(|p| p.is_dir())
        .collect())
}

/// `path` relative to `root`, with `/`.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn regex(pattern: &str) -> Regex {
    // The patterns are this file's constants: a bad one is a bug found by the first test run.
    Regex::new(pattern).unwrap_or_else(|e| panic!("pattern {pattern:?}: {e}"))
}

const IDENT: &str = r"[A-Za-z_][A-Za-z0-9_]*";

// ---------------------------------------------------------------------------------------------
// Source text: comments and literals blanked, test items left out.

/// `src` with comments and string and char literals blanked, every newline kept (so line
/// numbers still point at the source): a string becomes `""`, a char `' '`.
pub fn strip(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let n = s.len();
    let newlines =
        |from: usize, to: usize| s[from..to.min(n)].iter().filter(|&&c| c == '\n').count();
    let starts = |at: usize, text: &[char]| at + text.len() <= n && s[at..at + text.len()] == *text;
    let (line_comment, block_open, block_close) = (['/', '/'], ['/', '*'], ['*', '/']);
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < n {
        let c = s[i];
        if starts(i, &line_comment) {
            i = s[i..].iter().position(|&c| c == '\n').map_or(n, |p| i + p);
            continue;
        }
        if starts(i, &block_open) {
            let (mut depth, mut j) = (1, i + 2);
            while j < n && depth > 0 {
                if starts(j, &block_open) {
                    depth += 1;
                    j += 2;
                } else if starts(j, &block_close) {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            out.extend(std::iter::repeat_n('\n', newlines(i, j)));
            i = j;
            continue;
        }
        // A raw string (`r"…"`, `r#"…"#`) where `r` starts a token.
        if c == 'r' && (i == 0 || !(s[i - 1].is_alphanumeric() || s[i - 1] == '_')) {
            let hashes = s[i + 1..(i + 10).min(n)]
                .iter()
                .take_while(|&&c| c == '#')
                .count();
            if i + 1 + hashes < (i + 10).min(n) && s[i + 1 + hashes] == '"' {
                let end: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let from = i + 2 + hashes;
                let j = (from..n)
                    .find(|&k| starts(k, &end))
                    .map_or(n, |k| k + end.len());
                out.push_str("\"\"");
                out.extend(std::iter::repeat_n('\n', newlines(i, j)));
                i = j;
                continue;
            }
        }
        if c == '"' {
            let mut j = i + 1;
            while j < n && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            out.extend(std::iter::repeat_n('\n', newlines(i, j)));
            i = j + 1;
            continue;
        }
        if c == '\'' {
            // A char literal ('a', '\n', '\u{1F}'), not a lifetime ('a).
            if let Some(len) = char_literal(&s[i..(i + 12).min(n)]) {
                out.push_str("' '");
                i += len;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The length of the char literal `s` starts with (`'a'`, `'\n'`, `'\u{1F}'`), if it does.
fn char_literal(s: &[char]) -> Option<usize> {
    if s.first() != Some(&'\'') {
        return None;
    }
    match s.get(1)? {
        '\\' => {
            if s.get(2) == Some(&'u') && s.get(3) == Some(&'{') {
                let digits = s[4..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
                if digits > 0 && s.get(4 + digits) == Some(&'}') && s.get(5 + digits) == Some(&'\'')
                {
                    return Some(6 + digits);
                }
            }
            // `\\.`: any escaped character but a newline.
            match (s.get(2), s.get(3)) {
                (Some(c), Some('\'')) if *c != '\n' => Some(4),
                _ => None,
            }
        }
        '\'' => None,
        _ => (s.get(2) == Some(&'\'')).then_some(3),
    }
}

/// The index of the `}` closing the `{` at `open` (or the end of `code`).
fn closing_brace(code: &[char], open: usize) -> usize {
    let mut depth = 0i64;
    let mut e = open;
    while e < code.len() {
        match code[e] {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        e += 1;
    }
    e
}

/// `code` (already [`strip`]ped) with every `#[cfg(test)]` item (a `mod tests { … }`, an
/// `impl`, a `fn`, a `mod x;`) blanked, newlines kept; and which lines (from 1) were blanked.
pub fn blank_test_items(code: &str) -> (String, BTreeSet<usize>) {
    let chars: Vec<char> = code.chars().collect();
    let mut out = chars.clone();
    let mut blanked = vec![false; chars.len()];
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut at = 0;
    while at + marker.len() <= chars.len() {
        if chars[at..at + marker.len()] != marker[..] {
            at += 1;
            continue;
        }
        let start = at;
        let j = at + marker.len();
        let k = chars[j..]
            .iter()
            .position(|&c| c == '{' || c == ';')
            .map_or(chars.len(), |p| j + p);
        let end = if k >= chars.len() || chars[k] == ';' {
            (k + 1).min(chars.len())
        } else {
            (closing_brace(&chars, k) + 1).min(chars.len())
        };
        for x in start..end {
            blanked[x] = true;
            if out[x] != '\n' {
                out[x] = ' ';
            }
        }
        at = j;
    }
    let mut lines = BTreeSet::new();
    let mut line = 1;
    for (x, &c) in chars.iter().enumerate() {
        if blanked[x] {
            lines.insert(line);
        }
        if c == '\n' {
            line += 1;
        }
    }
    (out.into_iter().collect(), lines)
}

/// A source file read for a question about shipped code: stripped, its tests blanked.
fn shipped_code(path: &Path) -> Result<String, Unreadable> {
    Ok(blank_test_items(&strip(&read(path)?)).0)
}

// ---------------------------------------------------------------------------------------------
// 1.1 Module pairs that import each other.

/// A module: its path in its crate (`["checks", "kinds"]`; empty for the crate root).
pub type Module = Vec<String>;

/// Two modules of one crate that import each other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModulePair {
    /// The crate's folder under `crates/` (`evidence`).
    pub krate: String,
    pub a: Module,
    pub b: Module,
}

impl ModulePair {
    /// `evidence: checks::gitops <-> checks::kinds::knative_service`, as `modcycles.py` prints.
    pub fn line(&self) -> String {
        format!(
            "{}: {} <-> {}",
            self.krate,
            module_name(&self.a),
            module_name(&self.b)
        )
    }
}

/// `checks::kinds`, or `(root)`.
pub fn module_name(module: &Module) -> String {
    if module.is_empty() {
        "(root)".to_string()
    } else {
        module.join("::")
    }
}

/// How module pairs are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Only paths that name the module (`crate::checks::workload::X`): the issue's six.
    Direct,
    /// Also items re-exported at the crate root (`crate::Observed`) followed to their module.
    FollowingReexports,
}

/// The module a file under `src` is (`checks/kinds/mod.rs` is `checks::kinds`, `lib.rs` the
/// root); `None` for `src/bin/*`.
fn module_of(src: &Path, path: &Path) -> Option<Module> {
    let rel = path.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        return Some(Vec::new());
    }
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// `a::{b, c::{d, e}}` as `[a::b, a::c::d, a::c::e]` (whitespace removed, `::self` dropped).
pub fn expand_use_tree(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    static RENAME: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let rename = RENAME.get_or_init(|| regex(r"\bas\b.*$"));
    let mut out = Vec::new();
    expand_into(rename, "", &tree, &mut out);
    out
}

fn expand_into(rename: &Regex, prefix: &str, s: &str, out: &mut Vec<String>) {
    if let (Some(open), Some(close)) = (s.find('{'), s.rfind('}')) {
        let head = &s[..open];
        let body = if open < close {
            &s[open + 1..close]
        } else {
            ""
        };
        for part in split_top(body) {
            expand_into(rename, &format!("{prefix}{head}"), &part, out);
        }
    } else {
        let s = rename.replace(s, "");
        let full = format!("{prefix}{s}");
        out.push(full.strip_suffix("::self").unwrap_or(&full).to_string());
    }
}

/// `s` split at its top-level commas (none inside braces); empty parts dropped.
fn split_top(s: &str) -> Vec<String> {
    let (mut parts, mut depth, mut cur) = (Vec::new(), 0i32, String::new());
    for ch in s.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// The longest prefix of `parts` that is a module (the module, or the one an item is in).
fn resolve(parts: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let parts: Vec<String> = parts.iter().filter(|p| *p != "*").cloned().collect();
    (0..=parts.len())
        .rev()
        .map(|k| parts[..k].to_vec())
        .find(|candidate| modules.contains(candidate))
}

/// `(start, end, name)` of each inline `mod name { … }` (byte offsets in `code`).
fn inline_mod_spans(code: &str) -> Vec<(usize, usize, String)> {
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let only: Vec<char> = chars.iter().map(|(_, c)| *c).collect();
    let index_of = |byte: usize| chars.partition_point(|(b, _)| *b < byte);
    regex(&format!(r"\bmod\s+({IDENT})\s*\{{"))
        .captures_iter(code)
        .filter_map(|m| {
            let whole = m.get(0)?;
            let open = index_of(whole.end() - 1);
            let close = closing_brace(&only, open);
            let end = chars.get(close).map_or(code.len(), |(b, _)| *b);
            Some((whole.start(), end, m[1].to_string()))
        })
        .collect()
}

/// Each module of a crate and the modules it imports from (itself left out).
fn crate_edges(
    crate_dir: &Path,
    counting: Counting,
) -> Result<BTreeMap<Module, BTreeSet<Module>>, Unreadable> {
    let src = crate_dir.join("src");
    let mut files: BTreeMap<Module, PathBuf> = BTreeMap::new();
    for path in rust_files(&src)? {
        if let Some(module) = module_of(&src, &path) {
            files.insert(module, path);
        }
    }
    let modules: BTreeSet<Module> = files.keys().cloned().collect();
    let split = |path: &str| -> Vec<String> {
        path.split("::")
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    // Items re-exported at the crate root: name -> the module they live in.
    let mut reexported: BTreeMap<String, Module> = BTreeMap::new();
    let pub_use = regex(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);");
    for root in ["lib.rs", "main.rs"] {
        let path = src.join(root);
        if !path.exists() {
            continue;
        }
        let code = strip(&read(&path)?);
        for m in pub_use.captures_iter(&code) {
            for used in expand_use_tree(&m[1]) {
                let mut parts = split(&used);
                if parts.first().is_some_and(|p| p == "crate" || p == "self") {
                    parts.remove(0);
                }
                let Some(name) = parts.last().cloned() else {
                    continue;
                };
                if let Some(module) = resolve(&parts, &modules).filter(|m| !m.is_empty()) {
                    reexported.insert(name, module);
                }
            }
        }
    }
    let use_item = regex(r"\buse\s+([^;]+);");
    let inline = regex(&format!(r"(\$?crate|super|self)((?:::{IDENT})+)"));
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, path) in &files {
        let code = shipped_code(path)?;
        let spans = inline_mod_spans(&code);
        let mut refs: Vec<(usize, String)> = Vec::new();
        for m in use_item.captures_iter(&code) {
            let at = m.get(0).map_or(0, |w| w.start());
            refs.extend(expand_use_tree(&m[1]).into_iter().map(|p| (at, p)));
        }
        // Inline paths (`crate::server::SERVER_VERSION`), where the path starts a token.
        let mut from = 0;
        while let Some(m) = inline.captures_at(&code, from) {
            let whole = m.get(0).map_or(from..from, |w| w.range());
            let before = code[..whole.start].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                from = whole.start + 1;
                continue;
            }
            refs.push((whole.start, format!("{}{}", &m[1], &m[2])));
            from = whole.end;
        }
        for (at, used) in refs {
            let mut parts = split(&used);
            let Some(first) = parts.first().cloned() else {
                continue;
            };
            let base: Vec<String> = match first.as_str() {
                "crate" | "$crate" => {
                    parts.remove(0);
                    Vec::new()
                }
                "super" | "self" => {
                    let mut base = module.clone();
                    base.extend(
                        spans
                            .iter()
                            .filter(|(s, e, _)| *s < at && at < *e)
                            .map(|(_, _, name)| name.clone()),
                    );
                    while let Some(step) = parts.first().cloned() {
                        match step.as_str() {
                            "super" => {
                                base.pop();
                            }
                            "self" => {}
                            _ => break,
                        }
                        parts.remove(0);
                    }
                    base
                }
                _ => continue,
            };
            let full: Vec<String> = base.into_iter().chain(parts.iter().cloned()).collect();
            let mut target = resolve(&full, &modules);
            if target.as_ref().is_some_and(Vec::is_empty) && !parts.is_empty() {
                if let Some(module) = full.first().and_then(|name| reexported.get(name)) {
                    if counting == Counting::FollowingReexports {
                        target = Some(module.clone());
                    }
                }
            }
            let Some(target) = target else { continue };
            if &target != module {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    Ok(edges)
}

/// Whether one module contains the other (a parent `mod.rs` and its child: nesting, not a
/// loop between peers; the crate root contains every module).
fn nested(a: &Module, b: &Module) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Pairs of modules of one crate (non-test code of `crates/*/src`, nesting left out) where
/// each imports from the other.
pub fn module_pairs(root: &Path, counting: Counting) -> Result<Vec<ModulePair>, Unreadable> {
    let mut pairs = Vec::new();
    for dir in crate_dirs(root)? {
        if !dir.join("src").is_dir() {
            continue;
        }
        let krate = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let edges = crate_edges(&dir, counting)?;
        for (a, targets) in &edges {
            for b in targets {
                let back = edges.get(b).is_some_and(|t| t.contains(a));
                if back && a < b && !nested(a, b) {
                    pairs.push(ModulePair {
                        krate: krate.clone(),
                        a: a.clone(),
                        b: b.clone(),
                    });
                }
            }
        }
    }
    Ok(pairs)
}

// ---------------------------------------------------------------------------------------------
// 1.4 Branches on a kind variant.

/// The files that hold the kind tables today: branches there are the tables themselves.
pub const KIND_TABLES: [&str; 1] = ["crates/evidence/src/kinds/mod.rs"];

/// One line of code that branches on a `TargetKind::` / `ResourceKind::` variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindBranch {
    /// `crates/evidence/src/checks/gitops.rs`.
    pub file: String,
    pub line: usize,
    /// `arm` (a match arm pattern), `matches` (`matches!`, `if let`, `let … else`), `eq`
    /// (`==`/`!=` against a variant), comma-joined when more than one.
    pub form: String,
    /// The variants named on the line, as written.
    pub variants: Vec<String>,
}

impl KindBranch {
    pub fn in_kind_tables(&self) -> bool {
        KIND_TABLES.contains(&self.file.as_str())
    }
}

struct KindPatterns {
    variant: Regex,
    arm: Regex,
    matches: Regex,
    eq: Regex,
    arm_to: Regex,
    call: Regex,
    wrapper: Regex,
}

impl KindPatterns {
    fn new() -> KindPatterns {
        let v =
            r"(?:(?:crate|liveproof_evidence|super)::)*(?:TargetKind|ResourceKind)::[A-Z][A-Za-z]*";
        KindPatterns {
            variant: regex(v),
            arm: regex(&format!(
                r"(?:^|\|)\s*(?:ReportKind::Target\()?{v}\)?\s*(?:\|[^=]*)?(?:=>|\||if\b)"
            )),
            matches: regex(&format!(
                r"(?:matches!\s*\([^;]*?{v}|if\s+let\s+[^=]*{v}|let\s+(?:Some\()?{v})"
            )),
            eq: regex(&format!(r"(?:[!=]=\s*(?:&\s*)?{v}|{v}\s*[!=]=)")),
            arm_to: regex(&format!(r"{v}[^,;]*=>")),
            call: regex(r"[a-z_]\("),
            wrapper: regex(r"(ReportKind::Target|Some)\($"),
        }
    }

    /// The branches in `code` (stripped), as `kindmatches.py` finds them line by line:
    /// construction (`kind: TargetKind::Deployment`) is not a branch.
    fn scan(&self, file: &str, code: &str) -> Vec<KindBranch> {
        let lines: Vec<&str> = code.split('\n').collect();
        let mut hits = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if !self.variant.is_match(line) {
                continue;
            }
            let s = line.trim();
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                .unwrap_or("");
            let mut forms: Vec<&str> = Vec::new();
            let has_variant = self.variant.is_match(s);
            if next.starts_with('|') && has_variant && !s.ends_with(',') && !s.ends_with(';') {
                forms.push("arm");
            }
            if (self.arm.is_match(s) && s.contains("=>"))
                || ((s.starts_with('|') || s.ends_with('|')) && has_variant)
                || self.arm_to.is_match(s)
            {
                forms.push("arm");
            }
            if self.matches.is_match(s) {
                forms.push("matches");
            }
            if self.eq.is_match(s) {
                forms.push("eq");
            }
            let before = self.variant.find(s).map_or("", |m| &s[..m.start()]);
            if forms.contains(&"arm") && self.call.is_match(&self.wrapper.replace(before, "")) {
                // An argument in a guard, not a pattern.
                forms.retain(|f| *f != "arm");
            }
            if forms.is_empty() {
                continue;
            }
            let forms: BTreeSet<&str> = forms.into_iter().collect();
            let variants: BTreeSet<String> = self
                .variant
                .find_iter(s)
                .map(|m| m.as_str().to_string())
                .collect();
            hits.push(KindBranch {
                file: file.to_string(),
                line: i + 1,
                form: forms.into_iter().collect::<Vec<_>>().join(","),
                variants: variants.into_iter().collect(),
            });
        }
        hits
    }
}

/// Every branch on a kind variant in the non-test code of `crates/*/src` (the kind tables'
/// own files included: [`KindBranch::in_kind_tables`] tells them apart).
pub fn kind_branches(root: &Path) -> Result<Vec<KindBranch>, Unreadable> {
    let patterns = KindPatterns::new();
    let mut hits = Vec::new();
    for dir in crate_dirs(root)? {
        // Sorted as text, as the Python script sorted them (`kinds.rs` before `kinds/`).
        let mut files: Vec<(String, PathBuf)> = rust_files(&dir.join("src"))?
            .into_iter()
            .map(|p| (relative(root, &p), p))
            .collect();
        files.sort();
        for (file, path) in files {
            hits.extend(patterns.scan(&file, &shipped_code(&path)?));
        }
    }
    Ok(hits)
}

/// Branches per file, outside the kind tables.
pub fn kind_branches_per_file(branches: &[KindBranch]) -> BTreeMap<String, usize> {
    let mut per_file = BTreeMap::new();
    for b in branches.iter().filter(|b| !b.in_kind_tables()) {
        *per_file.entry(b.file.clone()).or_insert(0) += 1;
    }
    per_file
}

// ---------------------------------------------------------------------------------------------
// 1.5 Test kits and hand-written waits.

/// A place in the sources: `file:line` and the line's text, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: String,
    pub line: usize,
    pub text: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.text)
    }
}

/// The test folders scanned for waits: `crates/*/tests` and `xtask/tests`.
fn test_dirs(root: &Path) -> Result<Vec<PathBuf>, Unreadable> {
    let mut dirs: Vec<PathBuf> = crate_dirs(root)?
        .into_iter()
        .map(|d| d.join("tests"))
        .collect();
    dirs.push(root.join("xtask/tests"));
    Ok(dirs)
}

/// Loops in tests that sleep until a condition or a deadline, written out instead of calling
/// `testkit::wait`: a line starting a deadline (`Instant::now() + …`) or a bounded
/// `for _ in 0..N {`, with a `sleep(` within the 15 lines after it.
pub fn wait_loops(root: &Path) -> Result<Vec<Site>, Unreadable> {
    let start = regex(r"Instant::now\(\)\s*\+|for _ in 0\.\.\d+\s*\{");
    let mut sites = Vec::new();
    for dir in test_dirs(root)? {
        for path in rust_files(&dir)? {
            let text = read(&path)?;
            let lines: Vec<&str> = text.split('\n').collect();
            for (i, line) in lines.iter().enumerate() {
                let within = &lines[(i + 1).min(lines.len())..(i + 16).min(lines.len())];
                if start.is_match(line) && within.iter().any(|l| l.contains("sleep(")) {
                    sites.push(Site {
                        file: relative(root, &path),
                        line: i + 1,
                        text: line.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(sites)
}

/// A test kit beside the testkit crate: `crates/*/tests/common` or `crates/*/tests/world`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestKit {
    /// `crates/liveproof/tests/common/mod.rs`.
    pub file: String,
    pub lines: usize,
    /// Test files with a `mod common;` (or `mod world;`) line.
    pub users: usize,
}

pub fn test_kits(root: &Path) -> Result<Vec<TestKit>, Unreadable> {
    let mut kits = Vec::new();
    for kit in ["common", "world"] {
        for dir in crate_dirs(root)? {
            let tests = dir.join("tests");
            let module = tests.join(kit).join("mod.rs");
            if !module.is_file() {
                continue;
            }
            let mut users = 0;
            for path in read_dir_sorted(&tests)? {
                if path.extension().is_some_and(|e| e == "rs")
                    && read(&path)?
                        .lines()
                        .any(|l| l.starts_with(&format!("mod {kit};")))
                {
                    users += 1;
                }
            }
            kits.push(TestKit {
                file: relative(root, &module),
                lines: line_count(&module)?,
                users,
            });
        }
    }
    Ok(kits)
}

// ---------------------------------------------------------------------------------------------
// 1.2, 1.3 Sizes, and the I/O left in config.rs.

pub const VERIFIER: &str = "crates/liveproof/src/verifier.rs";
pub const CONFIG: &str = "crates/liveproof/src/config.rs";
pub const REAL_CLUSTER: &str = "crates/liveproof/tests/real_cluster.rs";

/// The files whose sizes are reported.
pub const SIZED: [&str; 5] = [
    VERIFIER,
    CONFIG,
    "crates/liveproof/src/cli.rs",
    "crates/liveproof/src/mcp/tools.rs",
    REAL_CLUSTER,
];

/// Lines in a file, as `wc -l` counts them (newlines).
pub fn line_count(path: &Path) -> Result<usize, Unreadable> {
    Ok(read(path)?.bytes().filter(|&b| b == b'\n').count())
}

/// The I/O patterns of PLAN §1.3 (and `measure.sh`): files, stdin, processes, git, the
/// kubeconfig, the record file.
pub const IO_PATTERN: &str = r"std::fs|std::io::stdin|Command::new|liveproof_process|liveproof_gather::(git|offline::load)|kubeconfig_contexts|context_namespace|\.exists\(\)|\.is_dir\(\)|\.is_file\(\)|canonicalize|std::path::absolute|check_record";

/// Lines of `config.rs`'s non-test code (comments and strings left out) that do I/O or call
/// what does.
pub fn config_io(root: &Path) -> Result<Vec<Site>, Unreadable> {
    let path = root.join(CONFIG);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let raw = read(&path)?;
    let code = blank_test_items(&strip(&raw)).0;
    let io = regex(IO_PATTERN);
    Ok(code
        .split('\n')
        .zip(raw.split('\n'))
        .enumerate()
        .filter(|(_, (code, _))| io.is_match(code))
        .map(|(i, (_, raw))| Site {
            file: CONFIG.to_string(),
            line: i + 1,
            text: raw.trim().to_string(),
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// 1.6 One of each.

/// `struct NAME` definitions in `crates/*/src` (tests included: a second one there is a
/// second one too).
pub fn struct_definitions(root: &Path, name: &str) -> Result<Vec<Site>, Unreadable> {
    let definition = regex(&format!(
        r"^\s*(pub(\([a-z]+\))? )?struct {}\b",
        regex::escape(name)
    ));
    let mut sites = Vec::new();
    for dir in crate_dirs(root)? {
        for path in rust_files(&dir.join("src"))? {
            let code = strip(&read(&path)?);
            for (i, line) in code.split('\n').enumerate() {
                if definition.is_match(line) {
                    sites.push(Site {
                        file: relative(root, &path),
                        line: i + 1,
                        text: line.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(sites)
}

/// Where non-test code outside `crates/helm` asks whether a JSON object is a `kind: List`
/// (`is_list_kind`) to flatten it: one place per List flattener (Helm's own calls walk YAML
/// values for redaction and are left out). PLAN §1.6 keeps one more than the flattener:
/// `gather::offline::add_json_list`, the streaming first level of a large List.
pub fn list_flatteners(root: &Path) -> Result<Vec<Site>, Unreadable> {
    let call = regex(r"\bis_list_kind\b");
    let mut sites = Vec::new();
    for dir in crate_dirs(root)? {
        if dir.file_name().is_some_and(|n| n == "helm") {
            continue;
        }
        for path in rust_files(&dir.join("src"))? {
            let raw = read(&path)?;
            let code = shipped_code(&path)?;
            for (i, (line, text)) in code.split('\n').zip(raw.split('\n')).enumerate() {
                if call.is_match(line) {
                    sites.push(Site {
                        file: relative(root, &path),
                        line: i + 1,
                        text: text.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(sites)
}

/// The crates whose code is test harness, not shipped: a git of their own there is a test's.
pub const TEST_CRATES: [&str; 1] = ["testkit"];

/// `Command::new("git")` in the non-test code of `crates/*/src`, outside `crates/process` (the
/// one git runner: `LC_ALL=C`, `LANGUAGE=C`, no prompt, bounded) and the test crates.
pub fn git_runners(root: &Path) -> Result<Vec<Site>, Unreadable> {
    let mut sites = Vec::new();
    for dir in crate_dirs(root)? {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "process" || TEST_CRATES.contains(&name.as_str()) {
            continue;
        }
        for path in rust_files(&dir.join("src"))? {
            let raw = read(&path)?;
            let (_, tests) = blank_test_items(&strip(&raw));
            for (i, line) in raw.split('\n').enumerate() {
                if line.contains("Command::new(\"git\")") && !tests.contains(&(i + 1)) {
                    sites.push(Site {
                        file: relative(root, &path),
                        line: i + 1,
                        text: line.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(sites)
}

// ---------------------------------------------------------------------------------------------
// Typed MCP: tool calls are the CLI's own request types, never a command line parsed again.

/// The MCP server's sources: `mcp.rs` and everything under this folder.
pub const MCP_DIR: &str = "crates/liveproof/src/mcp";

/// What building or reading back a command line looks like: clap's `try_parse_from`, an
/// `Argv` type, or a flag cut out of a string with `strip_prefix` (as `--kubeconfig=` was).
pub const COMMAND_LINE_PATTERN: &str = r"\btry_parse_from\b|\bArgv\b|\.strip_prefix\(";

/// Lines of the MCP server's non-test code (comments and strings left out) that build or
/// parse a command line ([`COMMAND_LINE_PATTERN`]). Its tests may parse one, to compare a
/// tool call with the command line a person would type.
pub fn mcp_command_lines(root: &Path) -> Result<Vec<Site>, Unreadable> {
    let dir = root.join(MCP_DIR);
    let mut files = rust_files(&dir)?;
    let module = dir.with_extension("rs");
    if module.exists() {
        files.push(module);
    }
    let pattern = regex(COMMAND_LINE_PATTERN);
    let mut sites = Vec::new();
    for path in files {
        let raw = read(&path)?;
        let code = shipped_code(&path)?;
        for (i, (line, text)) in code.split('\n').zip(raw.split('\n')).enumerate() {
            if pattern.is_match(line) {
                sites.push(Site {
                    file: relative(root, &path),
                    line: i + 1,
                    text: text.trim().to_string(),
                });
            }
        }
    }
    sites.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(sites)
}

// ---------------------------------------------------------------------------------------------
// Gather never imports the CLI crate.

/// The package name of the CLI crate (`crates/liveproof`).
pub const CLI_PACKAGE: &str = "liveproof";

/// The workspace packages a crate's `Cargo.toml` depends on (`liveproof`, `liveproof-*`), by
/// section: `dependencies`, `dev-dependencies`, `build-dependencies` (target-specific ones
/// under the same names).
pub fn workspace_dependencies(
    manifest: &Path,
) -> Result<BTreeMap<String, BTreeSet<String>>, Unreadable> {
    let header = regex(r"^\s*\[([^\]]+)\]\s*$");
    let entry = regex(r#"^\s*"?(liveproof(?:-[a-z0-9-]+)?)"?\s*(?:\.|=)"#);
    let mut sections: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut section = String::new();
    for line in read(manifest)?.lines() {
        if let Some(h) = header.captures(line) {
            let name = h[1].trim();
            section = ["build-dependencies", "dev-dependencies", "dependencies"]
                .into_iter()
                .find(|s| name == *s || name.ends_with(&format!(".{s}")))
                .unwrap_or("")
                .to_string();
            continue;
        }
        if section.is_empty() {
            continue;
        }
        if let Some(e) = entry.captures(line) {
            sections
                .entry(section.clone())
                .or_default()
                .insert(e[1].to_string());
        }
    }
    Ok(sections)
}

/// How `crates/gather` reaches the CLI crate, if it does: a dependency (any section, or
/// through the `[dependencies]` of the workspace crates it depends on) or a `liveproof::`
/// path in its code (src, tests, benches). Empty when it never does.
pub fn gather_reaches_the_cli(root: &Path) -> Result<Vec<String>, Unreadable> {
    let mut packages: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let name = regex(r#"^\s*name\s*=\s*"([^"]+)""#);
    for dir in crate_dirs(root)? {
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let package = read(&manifest)?
            .lines()
            .find_map(|l| name.captures(l).map(|c| c[1].to_string()))
            .unwrap_or_default();
        packages.insert(package, workspace_dependencies(&manifest)?);
    }
    let mut problems = Vec::new();
    let gather = "liveproof-gather";
    let direct: BTreeSet<String> = packages
        .get(gather)
        .map(|s| s.values().flatten().cloned().collect())
        .unwrap_or_default();
    for dep in &direct {
        // Breadth first through normal dependencies: the path by which gather reaches it.
        let mut queue = vec![vec![gather.to_string(), dep.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = queue.pop() {
            let last = path.last().cloned().unwrap_or_default();
            if last == CLI_PACKAGE {
                problems.push(format!("dependency: {}", path.join(" -> ")));
                break;
            }
            if !seen.insert(last.clone()) {
                continue;
            }
            let next = packages
                .get(&last)
                .and_then(|s| s.get("dependencies"))
                .cloned()
                .unwrap_or_default();
            for n in next {
                let mut longer = path.clone();
                longer.push(n);
                queue.insert(0, longer);
            }
        }
    }
    let path_to_cli = regex(r"(^|[^A-Za-z0-9_:])(::)?liveproof::");
    for sub in ["src", "tests", "benches"] {
        for path in rust_files(&root.join("crates/gather").join(sub))? {
            let code = strip(&read(&path)?);
            for (i, line) in code.split('\n').enumerate() {
                if path_to_cli.is_match(line) {
                    problems.push(format!(
                        "{}:{}: {}",
                        relative(root, &path),
                        i + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    Ok(problems)
}

// ---------------------------------------------------------------------------------------------
// Everything, measured once; printed as the plan's §1 tables.

/// The yardsticks of one checkout.
#[derive(Debug, Clone)]
pub struct Measures {
    pub pairs_direct: Vec<ModulePair>,
    pub pairs_reexports: Vec<ModulePair>,
    pub kind_branches: Vec<KindBranch>,
    pub sizes: Vec<(String, Option<usize>)>,
    pub config_io: Vec<Site>,
    pub kits: Vec<TestKit>,
    pub wait_loops: Vec<Site>,
    pub findings: Vec<Site>,
    pub reports: Vec<Site>,
    pub list_flatteners: Vec<Site>,
    pub git_runners: Vec<Site>,
    pub gather_to_cli: Vec<String>,
    /// Lines outside `verifier.rs` that name it (`crate::verifier::`, `verifier::x`).
    pub verifier_callers: usize,
}

fn verifier_callers(root: &Path) -> Result<usize, Unreadable> {
    let caller = regex(r"crate::verifier::|verifier::[A-Za-z]");
    let mut count = 0;
    for path in rust_files(&root.join("crates/liveproof/src"))? {
        if relative(root, &path) == VERIFIER {
            continue;
        }
        count += read(&path)?.lines().filter(|l| caller.is_match(l)).count();
    }
    Ok(count)
}

impl Measures {
    pub fn of(root: &Path) -> Result<Measures, Unreadable> {
        let sizes = SIZED
            .iter()
            .map(|f| {
                let path = root.join(f);
                Ok((
                    f.to_string(),
                    if path.exists() {
                        Some(line_count(&path)?)
                    } else {
                        None
                    },
                ))
            })
            .collect::<Result<_, Unreadable>>()?;
        Ok(Measures {
            pairs_direct: module_pairs(root, Counting::Direct)?,
            pairs_reexports: module_pairs(root, Counting::FollowingReexports)?,
            kind_branches: kind_branches(root)?,
            sizes,
            config_io: config_io(root)?,
            kits: test_kits(root)?,
            wait_loops: wait_loops(root)?,
            findings: struct_definitions(root, "Finding")?,
            reports: struct_definitions(root, "Report")?,
            list_flatteners: list_flatteners(root)?,
            git_runners: git_runners(root)?,
            gather_to_cli: gather_reaches_the_cli(root)?,
            verifier_callers: verifier_callers(root)?,
        })
    }

    fn size(&self, file: &str) -> String {
        self.sizes
            .iter()
            .find(|(f, _)| f == file)
            .and_then(|(_, n)| *n)
            .map_or_else(|| "(none)".to_string(), |n| n.to_string())
    }

    /// The tables, in Markdown.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let outside: Vec<&KindBranch> = self
            .kind_branches
            .iter()
            .filter(|b| !b.in_kind_tables())
            .collect();
        let per_file = kind_branches_per_file(&self.kind_branches);
        let _ = writeln!(out, "# Issue 34's yardsticks (cargo xtask arch)\n");
        let _ = writeln!(out, "| measure | now | goal |\n|---|---|---|");
        let mut row = |what: &str, now: String, goal: &str| {
            let _ = writeln!(out, "| {what} | {now} | {goal} |");
        };
        row(
            "module pairs importing each other (the issue's count: paths naming the module)",
            self.pairs_direct.len().to_string(),
            "0",
        );
        row(
            "... also following items re-exported at a crate root",
            self.pairs_reexports.len().to_string(),
            "0",
        );
        row(
            "branches on a TargetKind/ResourceKind variant outside the kind tables (kinds/mod.rs)",
            format!("{} in {} files", outside.len(), per_file.len()),
            "0 outside the descriptor module",
        );
        row("`verifier.rs` lines", self.size(VERIFIER), "<= 300");
        row("`config.rs` lines", self.size(CONFIG), "-");
        row(
            "`config.rs` lines doing I/O (outside its tests)",
            self.config_io.len().to_string(),
            "0",
        );
        row(
            "gather reaching the CLI crate",
            self.gather_to_cli.len().to_string(),
            "0",
        );
        row(
            "test kits beside testkit (`tests/common`, `tests/world`)",
            self.kits.len().to_string(),
            "0",
        );
        row(
            "hand-written wait loops in tests",
            self.wait_loops.len().to_string(),
            "0",
        );
        row(
            "`struct Finding` / `struct Report`",
            format!("{} / {}", self.findings.len(), self.reports.len()),
            "1 / 1",
        );
        row(
            "JSON List flattening sites (`is_list_kind` outside helm)",
            self.list_flatteners.len().to_string(),
            "2 (the flattener, add_json_list's streaming first level)",
        );
        row(
            "`Command::new(\"git\")` outside crates/process and tests",
            self.git_runners.len().to_string(),
            "0",
        );
        row(
            "lines of other modules naming `verifier`",
            self.verifier_callers.to_string(),
            "-",
        );

        let pairs = |out: &mut String, pairs: &[ModulePair]| {
            for p in pairs {
                let _ = writeln!(out, "    {}", p.line());
            }
            let _ = writeln!(out, "    {} module pairs import each other", pairs.len());
        };
        let _ = writeln!(
            out,
            "\n## 1.1 Module pairs that import each other (the issue's count: paths naming the module)\n"
        );
        pairs(&mut out, &self.pairs_direct);
        let _ = writeln!(
            out,
            "\n## ... and with items re-exported at a crate root followed to their module\n"
        );
        pairs(&mut out, &self.pairs_reexports);

        let _ = writeln!(out, "\n## 1.2 Line counts\n");
        for (file, n) in &self.sizes {
            let n = n.map_or_else(|| "(none)".to_string(), |n| n.to_string());
            let _ = writeln!(out, "    {n:>6} {file}");
        }

        let _ = writeln!(out, "\n## 1.3 I/O in config.rs (outside its tests)\n");
        for site in &self.config_io {
            let _ = writeln!(out, "    {}: {}", site.line, site.text);
        }
        let _ = writeln!(out, "    -- {} lines", self.config_io.len());

        let _ = writeln!(
            out,
            "\n## 1.4 Branches on a TargetKind/ResourceKind variant outside the kind tables\n"
        );
        for b in &outside {
            let _ = writeln!(
                out,
                "    {}:{}  {}  {}",
                b.file,
                b.line,
                b.form,
                b.variants.join(" ")
            );
        }
        let _ = writeln!(out, "\n    per file:");
        for (file, n) in &per_file {
            let _ = writeln!(out, "    {n:>4} {file}");
        }
        let _ = writeln!(
            out,
            "    -- {} branches on a kind variant in {} files outside the kind tables\n    -- (and {} inside kinds/mod.rs, the tables)",
            outside.len(),
            per_file.len(),
            self.kind_branches.len() - outside.len()
        );

        let _ = writeln!(out, "\n## 1.5 Test kits and waits\n");
        for kit in &self.kits {
            let _ = writeln!(
                out,
                "    {}: {} lines, used by {} test files",
                kit.file, kit.lines, kit.users
            );
        }
        let _ = writeln!(out);
        for site in &self.wait_loops {
            let _ = writeln!(out, "    {site}");
        }
        let _ = writeln!(
            out,
            "    -- {} hand-written wait loops in tests",
            self.wait_loops.len()
        );

        let _ = writeln!(out, "\n## 1.6 Two or three of one concept\n");
        let sites = |out: &mut String, title: &str, sites: &[Site]| {
            let _ = writeln!(out, "    {title}: {}", sites.len());
            for site in sites {
                let _ = writeln!(out, "      {site}");
            }
        };
        sites(&mut out, "struct Finding", &self.findings);
        sites(&mut out, "struct Report", &self.reports);
        sites(
            &mut out,
            "JSON List flattening sites (is_list_kind, non-test code outside crates/helm)",
            &self.list_flatteners,
        );
        sites(
            &mut out,
            "Command::new(\"git\") outside crates/process and the test crates (non-test code)",
            &self.git_runners,
        );

        let _ = writeln!(out, "\n## Gather and the CLI crate\n");
        if self.gather_to_cli.is_empty() {
            let _ = writeln!(
                out,
                "    crates/gather never reaches the CLI crate (dependencies, `liveproof::` paths)"
            );
        }
        for problem in &self.gather_to_cli {
            let _ = writeln!(out, "    {problem}");
        }
        out
    }
}

/// The repository this xtask belongs to.
pub fn repo_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_blanked_and_lines_kept() {
        let src = "a // c::d\nb /* x\ny */ \"s\nt\" r#\"q\"# 'c' '\\n' 'a\nend";
        let out = strip(src);
        assert_eq!(out.matches('\n').count(), src.matches('\n').count());
        assert_eq!(out, "a \nb \n \"\"\n \"\" ' ' ' ' 'a\nend");
    }

    #[test]
    fn test_items_are_blanked() {
        let code = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\nfn c() {}\n";
        let (out, lines) = blank_test_items(code);
        assert_eq!(out.lines().filter(|l| !l.trim().is_empty()).count(), 2);
        assert_eq!(lines, BTreeSet::from([2, 3, 4, 5]));
    }

    #[test]
    fn use_trees_expand() {
        assert_eq!(
            expand_use_tree("super::{a, b::{c, self}}"),
            ["super::a", "super::b::c", "super::b"]
        );
    }

    #[test]
    fn kind_branches_are_told_from_construction() {
        let code = "match k {\n    TargetKind::Release => 1,\n    TargetKind::Canary\n    | TargetKind::KnativeService => 2,\n}\nlet k = TargetKind::Deployment;\nif k == TargetKind::Canary {}\nmatches!(k, ResourceKind::Pod)\n";
        let hits = KindPatterns::new().scan("f.rs", code);
        let got: Vec<(usize, &str)> = hits.iter().map(|h| (h.line, h.form.as_str())).collect();
        assert_eq!(
            got,
            [
                (2, "arm"),
                (3, "arm"),
                (4, "arm"),
                (7, "eq"),
                (8, "matches")
            ]
        );
    }
}
