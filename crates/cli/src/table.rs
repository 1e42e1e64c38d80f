//! Plain-text tables for terminal output: left-aligned columns, two spaces apart.

use crate::text::columns;

/// Renders rows (the first is usually the header) of cleaned text as aligned columns, measured in
/// terminal columns so a wide character does not push the rest of its row out of line.
pub(crate) fn render<const N: usize>(rows: &[[String; N]]) -> String {
    let widths: Vec<usize> = (0..N)
        .map(|i| rows.iter().map(|r| columns(&r[i])).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - columns(cell))))
                .collect();
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

    #[test]
    fn wide_characters_are_padded_by_the_columns_they_take() {
        let rows = [["日本".to_owned(), "x".to_owned()], ["abcd".to_owned(), "y".to_owned()]];
        assert_eq!(super::render(&rows), "日本  x\nabcd  y");
    }
}
