//! What each subcommand does with its parsed arguments.

use std::fs::{File, OpenOptions};
use std::io::{self, Cursor, ErrorKind, IsTerminal, Read, Write};
use std::num::NonZeroUsize;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use riffpe::integer::DigitOrder;
use riffpe::{AnyFpe, Riffpe, RiffpeX, SetupError};
use riffpe_batch::Mode;
use zeroize::Zeroizing;

use riffpe_format::{Alphabet, Format, FormatCipher, Luhn};

use crate::args::{
    BasesArgs, Cli, ColumnFormat, Command, CryptArgs, CsvArgs, FormatArgs, KeygenArgs, LuhnMode,
    SchemeArgs,
};
use crate::bulk::{self, IntegerColumns, Pipeline, Source};
use crate::engine::{Direction, Engine};
use crate::formatted::{self, FormatLayout, FormatPipeline};
use crate::key::{self, KEY_ENV};
use crate::number::{Codec, Numbers};
use crate::output::{self, Sink};
use crate::progress::Progress;

/// The refusal of `--tweak-column` without `--column` (which clap also enforces).
const TWEAK_COLUMN_NEEDS_COLUMN: &str =
    "--tweak-column needs --column: the values must be in other columns";

/// Runs the subcommand.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Encrypt(args) => crypt(&args, Direction::Encrypt),
        Command::Decrypt(args) => crypt(&args, Direction::Decrypt),
        Command::Keygen(args) => keygen(&args),
        Command::Formats => formats(),
        Command::Bases(args) => bases(&args),
    }
}

/// `encrypt` and `decrypt`.
pub fn crypt(args: &CryptArgs, direction: Direction) -> Result<()> {
    // `into_string` moves the buffer, so the only copy is the one zeroized on drop.
    let env = std::env::var_os(KEY_ENV).map(|value| match value.into_string() {
        Ok(text) => Zeroizing::new(text),
        Err(value) => Zeroizing::new(value.to_string_lossy().into_owned()),
    });
    let key = key::load(args.key.key_file.as_deref(), args.key.key.as_deref(), env)?;
    let tweak = tweak(&args.scheme)?;
    if formatted_mode(args)? {
        let layout = format_layout(args, &key, &tweak)?;
        drop(key);
        let pipeline = FormatPipeline {
            layout,
            header: args.csv.header,
            direction,
            tweak: &tweak,
            block_records: match args.values.is_empty() {
                // All arguments in one block: an error in any of them prints nothing.
                false => usize::MAX,
                true => formatted::BLOCK_RECORDS,
            },
        };
        return pool(args)?.install(|| {
            with_io(args, |input, source, sink, name, progress| {
                pipeline.run(input, source, sink, name, progress)
            })
        });
    }
    let fpe = build_fpe(&args.scheme, &key, &tweak)?;
    drop(key);

    let order = match args.scheme.big_endian {
        true => DigitOrder::BigEndian,
        false => DigitOrder::LittleEndian,
    };
    let pool = pool(args)?;
    let mode = match pool.current_num_threads() {
        1 => Mode::Lockstep,
        _ => Mode::Parallel,
    };
    let block_lines = match args.values.is_empty() {
        // All arguments in one block: an error in any of them prints nothing.
        false => usize::MAX,
        true => bulk::block_lines(fpe.domain().radices(), args.scheme.bytes_per_value),
    };
    let numbers = Numbers::new(fpe.domain(), order);
    let engine = Engine::new(&fpe, direction, order, mode);
    let columns = integer_columns(&args.csv, &tweak)?;
    let domain_size = numbers.size();
    pool.install(|| {
        let run = Run {
            args,
            engine: &engine,
            columns,
            block_lines,
            domain_size,
        };
        match &numbers {
            Numbers::U64(codec) => run.stream(codec),
            Numbers::U128(codec) => run.stream(codec),
            Numbers::Big(codec) => run.stream(codec),
        }
    })
}

/// The tweak from `-t HEX` or `--tweak-text TEXT` (empty without either).
fn tweak(args: &SchemeArgs) -> Result<Vec<u8>> {
    if let Some(hex) = &args.tweak {
        if hex.trim().is_empty() {
            return Ok(Vec::new());
        }
        let bytes = key::decode_hex(hex).context("-t/--tweak")?;
        return Ok(bytes.to_vec());
    }
    Ok(args
        .tweak_text
        .as_deref()
        .map(|text| text.as_bytes().to_vec())
        .unwrap_or_default())
}

/// Riffpe (`-n`, `-l`) or RiffpeX (`--radices`), with the parameters checked.
fn build_fpe(args: &SchemeArgs, key: &[u8], tweak: &[u8]) -> Result<AnyFpe> {
    let bytes_per_value = args.bytes_per_value;
    let built: Result<AnyFpe, SetupError> = match &args.radices {
        Some(radices) => RiffpeX::builder(radices.clone())
            .bytes_per_value(bytes_per_value)
            .selection(args.selection())
            .tweak(tweak)
            .build(key)
            .map(Into::into),
        None => Riffpe::builder(args.radix, args.digits)
            .bytes_per_value(bytes_per_value)
            .selection(args.selection())
            .tweak(tweak)
            .build(key)
            .map(Into::into),
    };
    built.map_err(|error| {
        let uniform = args.radices.is_none();
        match error {
            SetupError::InvalidRadix { radix, .. } if uniform => {
                anyhow!("invalid parameters: -n/--radix {radix} is below 2")
            }
            SetupError::NoDigits if uniform => {
                anyhow!("invalid parameters: -l/--digits must be at least 1")
            }
            SetupError::InvalidBytesPerValue { .. } => {
                anyhow!("invalid parameters: -b/--bytes-per-value must be at least 1")
            }
            error => anyhow!("invalid parameters: {error}"),
        }
    })
}

/// The worker threads of `--threads` (all cores by default).
fn pool(args: &CryptArgs) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(args.io.threads.map_or(0, NonZeroUsize::get))
        .build()
        .context("cannot start the worker threads")
}

/// Whether the run is on strings of a format rather than integers; refuses format options
/// that have no format to apply to.
fn formatted_mode(args: &CryptArgs) -> Result<bool> {
    let formatted = args.format.any() || args.csv.column.iter().any(|c| c.format.is_some());
    let alphabet = args.format.alphabet.is_some()
        || (args.csv.column.iter()).any(|c| matches!(c.format, Some(ColumnFormat::Alphabet(_))));
    if args.format.passthrough.is_some() && !alphabet {
        bail!("--passthrough needs an alphabet: --alphabet or --column N:alphabet=A");
    }
    let template = args.format.template.is_some()
        || (args.csv.column.iter()).any(|c| matches!(c.format, Some(ColumnFormat::Template(_))));
    if args.format.literals_optional && !template {
        bail!("--literals-optional needs a template: --template or --column N:template=T");
    }
    if !formatted {
        let needs = "needs a format: --format, --template, --alphabet or --column N:FORMAT";
        if args.format.modifiers() {
            bail!("--keep-prefix, --keep-suffix, --luhn and --allow-small-domain each {needs}");
        }
    }
    Ok(formatted)
}

/// A named format, a template or a free-form alphabet (a column's own, else the options'),
/// with the options that change it.
fn build_format(args: &FormatArgs, column: Option<&ColumnFormat>) -> Result<Format> {
    let from_args = match (&args.format, &args.template, &args.alphabet) {
        (Some(name), ..) => Some(ColumnFormat::Named(name.clone())),
        (None, Some(template), _) => Some(ColumnFormat::Template(template.clone())),
        (None, None, Some(alphabet)) => Some(ColumnFormat::Alphabet(alphabet.clone())),
        (None, None, None) => None,
    };
    let chosen = column.or(from_args.as_ref());
    let format = match chosen {
        Some(ColumnFormat::Named(name)) => Format::named(name)?,
        Some(ColumnFormat::Template(template)) => Format::template(template)?,
        Some(ColumnFormat::Alphabet(alphabet)) => {
            let chars = match Alphabet::by_name(alphabet) {
                Some(builtin) => builtin,
                None => Alphabet::new(alphabet)?,
            };
            let passthrough = args.passthrough.as_deref().unwrap_or("");
            Format::free_form(chars, passthrough)?
        }
        None => bail!(
            "no format: give --format, --template or --alphabet, or a format per column (N:FORMAT)"
        ),
    };
    let mut format = format.allow_small_domain(args.allow_small_domain);
    // Templates only, so a named or free-form column beside a template column is left as it is.
    if args.literals_optional && matches!(chosen, Some(ColumnFormat::Template(_))) {
        format = format.literals_optional(true);
    }
    if let Some(n) = args.keep_prefix {
        format = format.keep_prefix(n);
    }
    if let Some(n) = args.keep_suffix {
        format = format.keep_suffix(n);
    }
    if let Some(mode) = args.luhn {
        format = format.luhn(match mode {
            LuhnMode::Preserve => Luhn::Preserve,
            LuhnMode::Invalid => Luhn::Invalid,
            LuhnMode::Off => Luhn::Off,
        });
    }
    Ok(format)
}

/// The format ciphers and where their values are: whole lines (or arguments), or CSV columns.
fn format_layout(args: &CryptArgs, key: &[u8], tweak: &[u8]) -> Result<FormatLayout> {
    let cipher = |column: Option<&ColumnFormat>, what: &str| -> Result<FormatCipher> {
        let format = build_format(&args.format, column).map_err(|e| anyhow!("{what}: {e}"))?;
        let cipher = FormatCipher::with_selection(key, format, args.scheme.selection())
            .map_err(|e| anyhow!("{what}: {e}"))?;
        Ok(cipher.context(tweak))
    };
    if args.csv.column.is_empty() {
        if args.csv.tweak_column.is_some() {
            bail!(TWEAK_COLUMN_NEEDS_COLUMN);
        }
        let what = match (&args.format.format, &args.format.template) {
            (Some(name), _) => format!("--format {name}"),
            (None, Some(_)) => "--template".to_string(),
            (None, None) => "--alphabet".to_string(),
        };
        return Ok(FormatLayout::Lines(Box::new(cipher(None, &what)?)));
    }
    if !args.values.is_empty() {
        bail!("--column reads --input or stdin, not arguments");
    }
    let mut columns = Vec::with_capacity(args.csv.column.len());
    for spec in &args.csv.column {
        let what = match &spec.format {
            Some(format) => format!("--column {}:{format}", spec.column),
            None => format!("--column {}", spec.column),
        };
        columns.push((spec.column.clone(), cipher(spec.format.as_ref(), &what)?));
    }
    Ok(FormatLayout::Csv {
        delimiter: args.csv.delimiter,
        columns,
        tweak_column: args.csv.tweak_column.clone(),
    })
}

/// Where the integer is: the whole line (`None`), or one column by number or header name, with
/// each row's own tweak if `--tweak-column` asks for it.
fn integer_columns<'t>(args: &CsvArgs, tweak: &'t [u8]) -> Result<Option<IntegerColumns<'t>>> {
    match args.column.as_slice() {
        [] if args.tweak_column.is_some() => bail!(TWEAK_COLUMN_NEEDS_COLUMN),
        [] => Ok(None),
        [spec] => Ok(Some(IntegerColumns {
            value: spec.column.clone(),
            tweak_column: args.tweak_column.clone(),
            tweak,
            delimiter: args.delimiter,
        })),
        _ => bail!(
            "several --column options need a format each (--column N:FORMAT) or --format: \
             integers take one column"
        ),
    }
}

/// Opens the input (arguments, --input or stdin) and the output (stdout, or --output put in
/// place on success), and runs `pipeline` from one into the other.
fn with_io(
    args: &CryptArgs,
    pipeline: impl FnOnce(Box<dyn Read>, &Source, &mut Sink, &str, &Progress) -> Result<u64>,
) -> Result<()> {
    let io_args = &args.io;
    let input_path = io_args
        .input
        .as_deref()
        .filter(|path| *path != Path::new("-"));
    let (input, source, size): (Box<dyn Read>, Source, Option<u64>) =
        match (args.values.is_empty(), input_path) {
            (false, _) => {
                let text = bulk::arguments_text(&args.values)?;
                (Box::new(Cursor::new(text)), Source::Arguments, None)
            }
            (true, Some(path)) => {
                let file = File::open(path)
                    .with_context(|| format!("cannot open input {}", path.display()))?;
                let size = file
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len());
                (Box::new(file), Source::File(path.to_path_buf()), size)
            }
            (true, None) => {
                let stdin = io::stdin();
                if stdin.is_terminal() && !io_args.quiet {
                    eprintln!(
                        "riffpe: reading values from the terminal, one per line (Ctrl-D ends)"
                    );
                }
                (Box::new(stdin.lock()), Source::Stdin, None)
            }
        };

    let output_path = io_args
        .output
        .as_deref()
        .filter(|path| *path != Path::new("-"));
    let mut sink = match output_path {
        Some(path) => {
            if input_path.is_some_and(|input| output::same_file(input, path)) {
                bail!(
                    "--output {} is the input file: write to another file (the input is never modified)",
                    path.display()
                );
            }
            Sink::file(path)?
        }
        None => Sink::stdout(),
    };

    let progress = Progress::for_input(size, io_args.quiet);
    let name = sink.name();
    pipeline(input, &source, &mut sink, &name, &progress)?;
    drop(progress);
    sink.commit()
}

/// One `encrypt` or `decrypt` run, before the codec is chosen.
struct Run<'a> {
    args: &'a CryptArgs,
    engine: &'a Engine<'a>,
    columns: Option<IntegerColumns<'a>>,
    block_lines: usize,
    domain_size: String,
}

impl Run<'_> {
    /// Streams the input through the integer pipeline into the output.
    fn stream<C: Codec>(self, codec: &C) -> Result<()> {
        let pipeline = Pipeline {
            codec,
            transform: self.engine,
            columns: self.columns,
            header: self.args.csv.header,
            block_lines: self.block_lines,
            domain_size: self.domain_size,
        };
        with_io(self.args, |input, source, sink, name, progress| {
            pipeline.run(input, source, sink, name, progress)
        })
    }
}

/// `keygen`.
pub fn keygen(args: &KeygenArgs) -> Result<()> {
    let mut key = Zeroizing::new(vec![0u8; args.bits.bytes()]);
    getrandom::fill(&mut key)
        .map_err(|e| anyhow!("cannot get random bytes from the operating system: {e}"))?;
    let mut text = key::encode_hex(&key);
    text.push('\n');
    match &args.output {
        Some(path) => write_new_file(path, text.as_bytes()),
        None => {
            let mut out = io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("cannot write to stdout")
        }
    }
}

/// Creates `path` (mode 0600 on Unix) with `contents`; refuses an existing file, and removes a
/// file it could not finish.
fn write_new_file(path: &Path, contents: &[u8]) -> Result<()> {
    let shown = path.display();
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => anyhow!("{shown} already exists: not overwritten"),
        _ => anyhow!(e).context(format!("cannot create {shown}")),
    })?;
    let written = file.write_all(contents).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(anyhow!(e).context(format!("cannot write {shown}")));
    }
    Ok(())
}

/// `bases`.
pub fn bases(args: &BasesArgs) -> Result<()> {
    let (size, threshold) = (args.size, args.threshold);
    let bases = riffpe::find_best_bases(size, threshold).map_err(|e| match e {
        // The core refuses both cases with one error; the command says which.
        SetupError::NoBases { .. } if threshold >= 2 && size >= threshold => anyhow!(
            "{size} cannot be split into bases of at least {threshold}: it has a prime factor \
             of 2^32 or more, which RiffpeX cannot take as a radix"
        ),
        SetupError::NoBases { .. } => {
            anyhow!("{size} cannot be split into bases of at least {threshold}")
        }
        e => anyhow!("{e}"),
    })?;
    let list: Vec<String> = bases.iter().map(u32::to_string).collect();
    let mut out = io::stdout().lock();
    writeln!(out, "{}", list.join(","))
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

/// `formats`: the named formats, their radices and the domain size for common lengths.
pub fn formats() -> Result<()> {
    let mut text = String::new();
    for named in riffpe_format::named_formats() {
        text.push_str(&format!(
            "{}\n  {}\n  radices: {}\n",
            named.name, named.description, named.radices
        ));
        for (length, size) in named.domain_sizes() {
            let size = match size {
                Ok(values) if values < riffpe_format::MIN_DOMAIN => {
                    format!(
                        "{} values: refused (under 10^6; --allow-small-domain)",
                        values
                    )
                }
                Ok(values) => format!("{} values", size_text(values)),
                Err(e) => format!("refused: {e}"),
            };
            text.push_str(&format!("  {length:>3} characters: {size}\n"));
        }
    }
    text.push_str(
        "\nLengths count alphabet characters, separators not included. Domains under 10^6 values \
         are refused:\nwhoever sees enough value/token pairs can tabulate them.\n",
    );
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

/// A domain size as `formats` prints it: `10^k` or `2^k` for an exact power (of two from 2^20
/// on), the number itself otherwise (`2.6·10^8` is clearer as digits than as a rounded power).
fn size_text(values: u128) -> String {
    let mut k = 0;
    let mut rest = values;
    while rest >= 10 && rest.is_multiple_of(10) {
        rest /= 10;
        k += 1;
    }
    match (rest, k) {
        (1, k) if k >= 3 => format!("10^{k}"),
        // `domain_for` saturates: 16^32 and above do not fit in 128 bits.
        _ if values == u128::MAX => "2^128 or more".to_string(),
        _ if values.is_power_of_two() && values >= 1 << 20 => {
            format!("2^{}", values.trailing_zeros())
        }
        _ => values.to_string(),
    }
}
