//! Plain-text tables for terminal output: left-aligned columns, two spaces apart.

/// Renders rows (the first is usually the header) as aligned columns.
pub fn render<const N: usize>(rows: &[[String; N]]) -> String {
    let widths: Vec<usize> = (0..N)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up_and_lines_have_no_trailing_spaces() {
        let rows = [
            ["ID".to_owned(), "TOOL".to_owned()],
            ["17".to_owned(), "write_file".to_owned()],
        ];
        assert_eq!(super::render(&rows), "ID  TOOL\n17  write_file");
    }
}
