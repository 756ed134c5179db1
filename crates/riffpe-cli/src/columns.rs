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
        (ColumnRef::Name(name), Some(names)) => {
            // Spaces or tabs around a name in the header ("id, card") need not be typed, unless
            // a name matches as it is.
            let blank = |c: char| c == ' ' || c == '\t';
            let exact = names.iter().any(|n| n == name);
            let mut found = names.iter().enumerate().filter(|(_, n)| {
                if exact {
                    *n == name
                } else {
                    n.trim_matches(blank) == name
                }
            });
            match (found.next(), found.next()) {
                (Some((index, _)), None) => Ok(index),
                // Either might be meant: the number says which.
                (Some((first, _)), Some((second, _))) => Err(anyhow!(
                    "{option} {name:?}: columns {} and {} of the header both have this name: \
                     give the number of the one meant",
                    first + 1,
                    second + 1
                )),
                (None, _) => Err(anyhow!(
                    "{option} {name:?}: the header has no column of this name (it has {})",
                    listed(names)
                )),
            }
        }
    }
}

/// The header's names, quoted, for a message: the first few, and how many more there are.
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut list: Vec<String> = names.iter().take(SHOWN).map(|n| format!("{n:?}")).collect();
    if names.len() > SHOWN {
        list.push(format!("{} more", names.len() - SHOWN));
    }
    list.join(", ")
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
        let blanks = header_names(b"id, card ,\tssn,ssn\n", b',').unwrap();
        assert_eq!(find(&name("card"), Some(&blanks), "--column").unwrap(), 1);
        assert_eq!(find(&name(" card "), Some(&blanks), "--column").unwrap(), 1);
        assert_eq!(find(&name("ssn"), Some(&blanks), "--column").unwrap(), 3);
        assert_eq!(find(&name("\tssn"), Some(&blanks), "--column").unwrap(), 2);
        let error = |column, names| find(&column, names, "--column").unwrap_err().to_string();
        let twice = header_names(b"card , card\n", b',').unwrap();
        assert!(error(name("card"), Some(&twice)).contains("columns 1 and 2"));
        assert_eq!(
            error(name("ssn"), Some(&names)),
            "--column \"ssn\": the header has no column of this name (it has \"id\", \
             \"full;name\", \"card\")"
        );
        assert_eq!(
            error(name("Card"), Some(&names)),
            "--column \"Card\": the header has no column of this name (it has \"id\", \
             \"full;name\", \"card\")"
        );
        let many: Vec<String> = (1..=10).map(|i| format!("c{i}")).collect();
        assert_eq!(
            error(name("x"), Some(&many)),
            "--column \"x\": the header has no column of this name (it has \"c1\", \"c2\", \
             \"c3\", \"c4\", \"c5\", \"c6\", \"c7\", \"c8\", 2 more)"
        );
        let twice = header_names(b"id,card,id,id\n", b',').unwrap();
        assert_eq!(
            error(name("id"), Some(&twice)),
            "--column \"id\": columns 1 and 3 of the header both have this name: give the \
             number of the one meant"
        );
        assert_eq!(find(&name("card"), Some(&twice), "--column").unwrap(), 1);
        assert_eq!(
            error(name("id"), None),
            "--column \"id\": a column name needs --header (or give its number)"
        );
        assert!(header_names(b"a,\"b\n", b',').is_err());
    }
}
