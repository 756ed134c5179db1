//! The template syntax: per-position alphabets and literals, parsed into a flat list of items.

use alloc::vec::Vec;

use crate::alphabet::{Alphabet, DefinitionError};
use crate::{Error, MAX_CHARS, TemplateError};

/// One character position of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Item {
    /// A position encrypted in the alphabet with this index in the format's list.
    Class(u16),
    /// A character that must appear as it is and passes through.
    Literal(char),
}

/// Adds `alphabet` to `alphabets` unless it is there, and returns its index.
pub(crate) fn intern(alphabets: &mut Vec<Alphabet>, alphabet: Alphabet) -> u16 {
    if let Some(i) = alphabets.iter().position(|a| *a == alphabet) {
        return i as u16;
    }
    alphabets.push(alphabet);
    // A template has at most MAX_CHARS positions, so at most that many alphabets.
    (alphabets.len() - 1) as u16
}

struct Cursor<'a> {
    chars: core::iter::Peekable<core::str::CharIndices<'a>>,
    /// Characters consumed so far.
    count: usize,
}

impl Cursor<'_> {
    /// The next character with its (char, byte) position.
    fn next(&mut self) -> Option<(char, usize, usize)> {
        let (byte, c) = self.chars.next()?;
        let position = self.count;
        self.count += 1;
        Some((c, position, byte))
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }
}

fn error(position: usize, byte: usize, reason: TemplateError) -> Error {
    Error::Template {
        position,
        byte,
        reason,
    }
}

/// Parses `template`; `named` are the caller's alphabets for `{name}`, looked up before the
/// built-in ones.
pub(crate) fn parse(
    template: &str,
    named: &[(&str, &Alphabet)],
    alphabets: &mut Vec<Alphabet>,
) -> Result<Vec<Item>, Error> {
    let mut items: Vec<Item> = Vec::new();
    // Whether the last item may be repeated: false at the start and right after a repeat.
    let mut repeatable = false;
    let mut cur = Cursor {
        chars: template.char_indices().peekable(),
        count: 0,
    };
    while let Some((c, position, byte)) = cur.next() {
        let item = match c {
            '9' => Item::Class(intern(alphabets, Alphabet::digits())),
            'a' => Item::Class(intern(alphabets, Alphabet::lower())),
            'A' => Item::Class(intern(alphabets, Alphabet::upper())),
            'x' => Item::Class(intern(alphabets, Alphabet::alnum())),
            '\\' => match cur.next() {
                Some((lit, _, _)) => Item::Literal(lit),
                None => return Err(error(position, byte, TemplateError::DanglingEscape)),
            },
            '[' => {
                let class = parse_class(&mut cur, position, byte)?;
                Item::Class(intern(alphabets, class))
            }
            '{' => {
                let mut body = alloc::string::String::new();
                loop {
                    match cur.next() {
                        Some(('}', _, _)) => break,
                        Some((ch, _, _)) => body.push(ch),
                        None => return Err(error(position, byte, TemplateError::UnclosedBrace)),
                    }
                }
                if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
                    let last = match (repeatable, items.last()) {
                        (true, Some(&last)) => last,
                        _ => return Err(error(position, byte, TemplateError::RepeatWithoutItem)),
                    };
                    let count: usize = body.parse().unwrap_or(usize::MAX);
                    if count == 0 || count > MAX_CHARS {
                        return Err(error(position, byte, TemplateError::BadRepeat));
                    }
                    if items.len() - 1 + count > MAX_CHARS {
                        return Err(error(position, byte, TemplateError::TooLong));
                    }
                    items.extend(core::iter::repeat_n(last, count - 1));
                    repeatable = false;
                    continue;
                }
                let alphabet = named
                    .iter()
                    .find(|(name, _)| *name == body)
                    .map(|(_, a)| (*a).clone())
                    .or_else(|| Alphabet::by_name(&body))
                    .ok_or_else(|| error(position, byte, TemplateError::UnknownAlphabet))?;
                Item::Class(intern(alphabets, alphabet))
            }
            other => Item::Literal(other),
        };
        if items.len() == MAX_CHARS {
            return Err(error(position, byte, TemplateError::TooLong));
        }
        items.push(item);
        repeatable = true;
    }
    if items.is_empty() {
        return Err(error(0, 0, TemplateError::Empty));
    }
    Ok(items)
}

/// Parses a class after its `[`: characters, `c-d` ranges and `\` escapes up to `]`. The
/// alphabet is the set in code point order, so `[a-f0-9]` is `hex`.
fn parse_class(cur: &mut Cursor<'_>, open: usize, open_byte: usize) -> Result<Alphabet, Error> {
    let mut chars: Vec<char> = Vec::new();
    loop {
        let (c, position, byte) = cur
            .next()
            .ok_or_else(|| error(open, open_byte, TemplateError::UnclosedClass))?;
        let lo = match c {
            ']' => break,
            '\\' => match cur.next() {
                Some((e, _, _)) => e,
                None => return Err(error(position, byte, TemplateError::DanglingEscape)),
            },
            other => other,
        };
        // `c-d` is a range unless the `-` is the class's last character.
        if cur.peek() == Some('-') {
            let mut ahead = cur.chars.clone();
            ahead.next();
            if let Some(&(_, next)) = ahead.peek()
                && next != ']'
            {
                cur.next();
                let (hi_char, hp, hb) = cur
                    .next()
                    .ok_or_else(|| error(open, open_byte, TemplateError::UnclosedClass))?;
                let hi = if hi_char == '\\' {
                    cur.next()
                        .map(|(e, _, _)| e)
                        .ok_or_else(|| error(hp, hb, TemplateError::DanglingEscape))?
                } else {
                    hi_char
                };
                if hi < lo {
                    return Err(error(position, byte, TemplateError::ReversedRange));
                }
                let span = u32::from(hi) - u32::from(lo);
                if chars.len() + span as usize >= crate::alphabet::MAX_ALPHABET {
                    return Err(error(position, byte, TemplateError::ClassSize));
                }
                chars.extend(lo..=hi);
                continue;
            }
        }
        if chars.len() >= crate::alphabet::MAX_ALPHABET {
            return Err(error(position, byte, TemplateError::ClassSize));
        }
        chars.push(lo);
    }
    chars.sort_unstable();
    if chars.windows(2).any(|w| w[0] == w[1]) {
        return Err(error(open, open_byte, TemplateError::DuplicateInClass));
    }
    Alphabet::from_vec(chars).map_err(|e| match e {
        DefinitionError::Size(_) => error(open, open_byte, TemplateError::ClassSize),
        DefinitionError::Duplicate(_) => error(open, open_byte, TemplateError::DuplicateInClass),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn items(t: &str) -> Result<(Vec<Item>, Vec<Alphabet>), Error> {
        let mut alphabets = Vec::new();
        parse(t, &[], &mut alphabets).map(|i| (i, alphabets))
    }

    #[test]
    fn repeat_equals_spelled_out() {
        assert_eq!(items("9{3}-a").unwrap(), items("999-a").unwrap());
        assert_eq!(items("[0-9]").unwrap().1, vec![Alphabet::digits()]);
        assert_eq!(items("[a-f0-9]").unwrap().1, vec![Alphabet::hex()]);
        assert_eq!(items("{HEX}").unwrap().1, vec![Alphabet::upper_hex()]);
    }

    #[test]
    fn escapes_and_literals() {
        let (i, _) = items(r"\9-9").unwrap();
        assert_eq!(i[0], Item::Literal('9'));
        assert_eq!(i[1], Item::Literal('-'));
        assert_eq!(i[2], Item::Class(0));
        let (_, a) = items(r"[\]\-x-z]").unwrap();
        assert_eq!(a[0].chars(), &['-', ']', 'x', 'y', 'z']);
        let (_, a) = items("[a-]").unwrap();
        assert_eq!(a[0].chars(), &['-', 'a']);
    }

    #[test]
    fn errors_carry_positions() {
        let at = |t: &str| match items(t) {
            Err(Error::Template {
                position,
                byte,
                reason,
            }) => (position, byte, reason),
            other => panic!("{other:?}"),
        };
        assert_eq!(at("99[0-9"), (2, 2, TemplateError::UnclosedClass));
        assert_eq!(at("é9{x}"), (2, 3, TemplateError::UnknownAlphabet));
        assert_eq!(at("{3}"), (0, 0, TemplateError::RepeatWithoutItem));
        assert_eq!(at("9{2}{2}"), (4, 4, TemplateError::RepeatWithoutItem));
        assert_eq!(at("9{0}"), (1, 1, TemplateError::BadRepeat));
        assert_eq!(
            at("9{99999999999999999999999}"),
            (1, 1, TemplateError::BadRepeat)
        );
        assert_eq!(at("9{4097}"), (1, 1, TemplateError::BadRepeat));
        assert_eq!(at("99{4096}"), (2, 2, TemplateError::TooLong));
        assert_eq!(at("9\\"), (1, 1, TemplateError::DanglingEscape));
        assert_eq!(at("[z-a]"), (1, 1, TemplateError::ReversedRange));
        assert_eq!(at("[aa]"), (0, 0, TemplateError::DuplicateInClass));
        assert_eq!(at("[a]"), (0, 0, TemplateError::ClassSize));
        assert_eq!(at("9{"), (1, 1, TemplateError::UnclosedBrace));
        assert_eq!(at(""), (0, 0, TemplateError::Empty));
    }
}
