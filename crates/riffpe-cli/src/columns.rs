//! `--column` and `--tweak-column` resolved to field indices, for formats and integers alike: a
//! number is its own index, a name is looked up in the header.

use anyhow::{Result, anyhow};

use crate::args::ColumnRef;
use crate::records;

/// The names of the header record's fields (`header` with or without its line ending), CSV
/// unquoted. A byte order mark before it is the line reader's to drop.
pub fn header_names(header: &[u8], delimiter: u8) -> Result<Vec<String>> {
    let (content, _) = records::split_line_ending(header);
    let mut fields = Vec::new();
    records::csv_fields(content, delimiter, &mut fields).map_err(|e| anyhow!("the header: {e}"))?;
    Ok(fields
        .iter()
        .map(|field| String::from_utf8_lossy(&field.value(content).unwrap_or_default()).into())
        .collect())
}

/// The 0-based field index of `column`, given as option `option` (for messages); `names` is
/// the header's, `None` without `--header`.
pub fn find(column: &ColumnRef, names: Option<&[String]>, option: &str) -> Result<usize> {
    match (column, names) {
        (ColumnRef::Index(i), _) => Ok(*i),
        (ColumnRef::Name(name), None) => Err(anyhow!(
            "{option} {name:?}: a column name needs --header (or give its number)"
        )),
        (ColumnRef::Name(name), Some(names)) => names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| anyhow!("{option} {name:?}: the header has no column of this name")),
    }
}

/// The refusal of `--tweak-column column` (field `index`, 0-based) where that column is also
/// encrypted.
pub fn tweak_column_encrypted(column: &ColumnRef, index: usize) -> anyhow::Error {
    anyhow!(
        "--tweak-column {column}: column {} is also encrypted; a tweak must stay readable to \
         decrypt",
        index + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_header() {
        let names = header_names(b"id;\"full;name\";card\r\n", b';').unwrap();
        assert_eq!(names, ["id", "full;name", "card"]);
        let name = |n: &str| ColumnRef::Name(n.into());
        assert_eq!(find(&name("card"), Some(&names), "--column").unwrap(), 2);
        assert_eq!(
            find(&name("full;name"), Some(&names), "--column").unwrap(),
            1
        );
        assert_eq!(find(&ColumnRef::Index(7), None, "--column").unwrap(), 7);
        let error = |column, names| find(&column, names, "--column").unwrap_err().to_string();
        assert_eq!(
            error(name("ssn"), Some(&names)),
            "--column \"ssn\": the header has no column of this name"
        );
        assert_eq!(
            error(name("id"), None),
            "--column \"id\": a column name needs --header (or give its number)"
        );
        assert!(header_names(b"a,\"b\n", b',').is_err());
    }
}
