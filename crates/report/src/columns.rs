//! kubectl's `-o custom-columns=NAME:.path,NAME:.path`: a header row, then a row per item (a
//! verify report's targets), each cell what its path reaches in the item (several results
//! joined by `,`, nothing as `<none>`), aligned as kubectl aligns its tables (Go's tabwriter:
//! cells at least 10 wide, 3 spaces between columns).

use std::fmt;

use serde_json::Value;

use crate::jsonpath::{relaxed_path, text_of, Path, TemplateError};

/// The columns `-o custom-columns=` asked for, kept with their source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    source: String,
    columns: Vec<(String, Path)>,
}

impl Columns {
    /// Parses `NAME:PATH,NAME:PATH` (a path as `.name`, `{.name}` or `$.name`).
    pub fn parse(spec: &str) -> Result<Columns, TemplateError> {
        if spec.trim().is_empty() {
            return Err(TemplateError::new(
                "custom-columns names no column (e.g. custom-columns=NAME:.name,VERDICT:.verdict)",
            ));
        }
        let mut columns = Vec::new();
        for part in spec.split(',') {
            let Some((name, path)) = part.split_once(':') else {
                return Err(TemplateError::new(format!(
                    "custom-columns `{part}` is not <header>:<json-path-expr> (e.g. VERDICT:.verdict)"
                )));
            };
            if name.trim().is_empty() {
                return Err(TemplateError::new(format!(
                    "custom-columns `{part}` has no header before `:`"
                )));
            }
            let path = relaxed_path(path)
                .map_err(|e| TemplateError::new(format!("custom-columns `{part}`: {e}")))?;
            columns.push((name.trim().to_string(), path));
        }
        Ok(Columns {
            source: spec.to_string(),
            columns,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The table over `items`, each row's cells read from its item (`root` for `$` paths).
    pub fn table(&self, root: &Value, items: &[&Value]) -> String {
        let mut rows: Vec<Vec<String>> =
            vec![self.columns.iter().map(|(n, _)| n.clone()).collect()];
        for item in items {
            rows.push(
                self.columns
                    .iter()
                    .map(|(_, path)| {
                        let found: Vec<String> = path
                            .select(root, item)
                            .into_iter()
                            .map(text_of)
                            .filter(|t| !t.is_empty())
                            .collect();
                        if found.is_empty() {
                            "<none>".to_string()
                        } else {
                            // One line a row: a value's own line breaks would break it.
                            found.join(",").replace(['\n', '\r', '\t'], " ")
                        }
                    })
                    .collect(),
            );
        }
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in rows {
            let last = row.len() - 1;
            for (i, cell) in row.iter().enumerate() {
                if i == last {
                    out.push_str(cell);
                } else {
                    let width = (widths[i] + PADDING).max(MIN_WIDTH);
                    out.push_str(cell);
                    out.push_str(&" ".repeat(width - cell.chars().count()));
                }
            }
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for Columns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// kubectl's table writer: `tabwriter.NewWriter(out, 10, 4, 3, ' ', 0)`.
const MIN_WIDTH: usize = 10;
const PADDING: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_per_item_under_a_header_as_kubectl_aligns_it() {
        let doc = json!({"verdict": "not_live", "targets": [
            {"kind": "Deployment", "name": "web", "verdict": "live", "via": "helmrelease/apps/shop"},
            {"kind": "StatefulSet", "name": "cart", "verdict": "not_live"}
        ]});
        let items: Vec<&Value> = doc["targets"].as_array().expect("targets").iter().collect();
        let columns =
            Columns::parse("NAME:.name,KIND:{.kind},VIA:via,ALL:$.verdict").expect("columns");
        assert_eq!(
            columns.table(&doc, &items),
            "NAME      KIND          VIA                     ALL\n\
             web       Deployment    helmrelease/apps/shop   not_live\n\
             cart      StatefulSet   <none>                  not_live\n"
        );
    }

    #[test]
    fn a_column_that_is_not_header_colon_path_is_refused() {
        for (spec, said) in [
            ("", "names no column"),
            ("NAME", "is not <header>:<json-path-expr>"),
            (":.name", "has no header"),
            ("N:.a[", "not closed by `]`"),
        ] {
            let err = Columns::parse(spec).expect_err(spec);
            assert!(err.to_string().contains(said), "{spec}: {err}");
        }
    }
}
