//! TypeScript to JavaScript for pi's extension modules (node 20 cannot strip types).
//!
//! The node host's loader hook (`node/hooks.mjs`) runs the pi-rs binary with
//! `PI_RS_TRANSPILE=<file>` for each `.ts` module it loads; `main` answers that with
//! [`transpile_file`] before anything else. Compiling in Rust (oxc's parser, TypeScript
//! transform and code generator) keeps the host free of any npm dependency: the binary
//! carries everything an extension needs besides `node` itself.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

/// The environment variable that asks the binary to compile one file and exit.
pub const TRANSPILE_ENV: &str = "PI_RS_TRANSPILE";

/// `line:column` (1-based) of a byte offset.
fn position(source: &str, offset: usize) -> String {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{line}:{column}")
}

fn describe(path: &Path, source: &str, error: &oxc::diagnostics::OxcDiagnostic) -> String {
    let at = error
        .labels
        .as_ref()
        .and_then(|labels| labels.first())
        .map(|label| format!(":{}", position(source, label.offset())))
        .unwrap_or_default();
    format!("{}{at}: {}", path.display(), error.message)
}

/// Compiles TypeScript (or JavaScript) `source` to JavaScript: types, interfaces,
/// type-only imports and other TypeScript syntax are removed, everything else is kept.
/// The file name decides the syntax (`.ts`, `.mts`, `.cts`, `.tsx`, `.js`, …). Errors
/// name the file, line and column.
pub fn transpile(path: &Path, source: &str) -> Result<String, String> {
    let allocator = Allocator::default();
    let source_type = SourceType::from_path(path).unwrap_or_else(|_| SourceType::ts());
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = parsed.errors.first() {
        return Err(describe(path, source, error));
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new()
        .build(&program)
        .semantic
        .into_scoping();
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(&allocator, path, &options).build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.errors.first() {
        return Err(describe(path, source, error));
    }
    Ok(Codegen::new().build(&program).code)
}

/// Reads and compiles one file (see [`transpile`]).
pub fn transpile_file(path: &Path) -> Result<String, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    transpile(path, &source)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn types_and_type_only_imports_are_removed() {
        let source = r#"
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
interface Options { verbose?: boolean }
type Name = string;
enum Level { Low, High }
export default function (pi: ExtensionAPI, options?: Options): void {
    const name = "x" as Name;
    const schema = Type.Object({});
    const list: Array<number> = [1, 2];
    console.log(name!, schema, list, Level.High);
}
"#;
        let js = transpile(Path::new("ext.ts"), source).unwrap();
        assert!(!js.contains("ExtensionAPI"), "{js}");
        assert!(!js.contains("interface"), "{js}");
        assert!(js.contains("import { Type } from \"typebox\""), "{js}");
        assert!(js.contains("export default function(pi, options)"), "{js}");
        assert!(js.contains("Level[\"High\"] = 1"), "{js}");
    }

    #[test]
    fn syntax_errors_name_the_file_and_position() {
        let err = transpile(Path::new("/x/bad.ts"), "const a = ;\n").unwrap_err();
        assert!(err.starts_with("/x/bad.ts:1:11: "), "{err}");
    }
}
