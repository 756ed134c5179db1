//! `find_best_bases`: the reference's choice of RiffpeX radices for a domain of a given size.

use alloc::vec::Vec;

use crate::SetupError;

/// Splits `size` into factors, each at least `threshold`, whose product is exactly `size`,
/// minimising the cost `Σ r·log2(r)` (which tracks Riffpe's work: `r` values per digit, each
/// needing `log2 r` bits). Returns them in ascending order, as the reference does.
///
/// Errors when `size < threshold`, `threshold < 2`, or a factor would not fit a radix (a prime
/// of 2^32 or more). A prime `size` below 2^32 comes back as itself. The result is of the type
/// [`RiffpeX::new`](crate::RiffpeX::new) takes (which still refuses a radix whose keystream
/// would exceed [`MAX_SCRATCH_BYTES`](crate::MAX_SCRATCH_BYTES)).
///
/// ```
/// assert_eq!(riffpe::find_best_bases(7_000_000_000, 30)?, [35, 40, 40, 50, 50, 50]);
/// let radices = riffpe::find_best_bases(227_840_000, 24)?;
/// assert_eq!(radices, [40, 40, 40, 40, 89]);
/// let fpe = riffpe::RiffpeX::new(radices, &[0x2b; 16], b"")?;
/// # Ok::<(), riffpe::Error>(())
/// ```
pub fn find_best_bases(size: u64, threshold: u64) -> Result<Vec<u32>, SetupError> {
    if threshold < 2 || size < threshold {
        return Err(SetupError::NoBases { size, threshold });
    }
    let divisors = divisors(size);
    let mut search = Search {
        divisors: &divisors,
        threshold,
        chosen: Vec::new(),
        best: Vec::new(),
        best_cost: f64::INFINITY,
    };
    search.run(size, 0, 0.0);
    // The radices of a RiffpeX: a factor of 2^32 or more (a large prime) is none.
    search
        .best
        .iter()
        .map(|&base| u32::try_from(base).map_err(|_| SetupError::NoBases { size, threshold }))
        .collect()
}

/// Depth-first search over non-decreasing factor lists, pruned by the best cost so far.
struct Search<'a> {
    divisors: &'a [u64],
    threshold: u64,
    chosen: Vec<u64>,
    best: Vec<u64>,
    best_cost: f64,
}

impl Search<'_> {
    fn run(&mut self, rest: u64, from: usize, cost: f64) {
        if rest == 1 {
            if cost < self.best_cost {
                self.best_cost = cost;
                self.best.clone_from(&self.chosen);
            }
            return;
        }
        for at in from..self.divisors.len() {
            let factor = self.divisors[at];
            if factor < self.threshold || !rest.is_multiple_of(factor) {
                continue;
            }
            if factor > rest {
                break;
            }
            let cost = cost + weight(factor);
            if cost >= self.best_cost {
                break; // weights grow with the factor: no later factor does better
            }
            let quotient = rest / factor;
            // Later factors are at least this one, so the quotient is 1 or at least `factor`.
            if quotient != 1 && quotient < factor {
                continue;
            }
            self.chosen.push(factor);
            self.run(quotient, at, cost);
            self.chosen.pop();
        }
    }
}

/// `r · log2(r)`.
fn weight(r: u64) -> f64 {
    r as f64 * log2(r)
}

/// `log2` for integers without `std`: the exponent, then the mantissa's bits by squaring.
fn log2(x: u64) -> f64 {
    let exponent = 63 - x.leading_zeros();
    let mut mantissa = x as f64 / (1u64 << exponent) as f64; // in [1, 2)
    let mut result = f64::from(exponent);
    let mut bit = 0.5;
    for _ in 0..52 {
        mantissa *= mantissa;
        if mantissa >= 2.0 {
            mantissa /= 2.0;
            result += bit;
        }
        bit /= 2.0;
    }
    result
}

/// All divisors of `n`, ascending.
fn divisors(n: u64) -> Vec<u64> {
    let mut primes: Vec<(u64, u32)> = Vec::new();
    let mut factors = Vec::new();
    factorize(n, &mut factors);
    factors.sort_unstable();
    for p in factors {
        match primes.last_mut() {
            Some((q, e)) if *q == p => *e += 1,
            _ => primes.push((p, 1)),
        }
    }
    let mut divisors = Vec::from([1u64]);
    for (p, e) in primes {
        let count = divisors.len();
        let mut power = 1u64;
        for _ in 0..e {
            power *= p;
            for i in 0..count {
                divisors.push(divisors[i] * power);
            }
        }
    }
    divisors.sort_unstable();
    divisors
}

/// Prime factors of `n` (with repetition), by trial division then Pollard's rho.
fn factorize(mut n: u64, out: &mut Vec<u64>) {
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
    }
    let mut stack = Vec::from([n]);
    while let Some(m) = stack.pop() {
        if m == 1 {
            continue;
        }
        if is_prime(m) {
            out.push(m);
            continue;
        }
        let d = pollard_rho(m);
        stack.push(d);
        stack.push(m / d);
    }
}

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(m)) as u64
}

fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut result = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    result
}

/// Deterministic Miller–Rabin for 64-bit integers (these bases cover every `u64`).
fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let (mut d, mut s) = (n - 1, 0);
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    'witness: for a in BASES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// A non-trivial factor of the odd composite `n` (Pollard's rho, Floyd cycle finding).
fn pollard_rho(n: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    for c in 1.. {
        let f = |x: u64| (mul_mod(x, x, n) + c) % n;
        let (mut x, mut y, mut d) = (2u64, 2u64, 1u64);
        while d == 1 {
            x = f(x);
            y = f(f(y));
            d = gcd(x.abs_diff(y), n);
        }
        if d != n {
            return d;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_matches_powers_and_known_values() {
        for e in 0..63 {
            assert_eq!(log2(1 << e), f64::from(e));
        }
        assert!((log2(10) - core::f64::consts::LOG2_10).abs() < 1e-12);
    }

    #[test]
    fn factorizes_large_semiprimes() {
        let n = 4_294_967_291u64 * 4_294_967_279; // two primes below 2^32
        let mut f = Vec::new();
        factorize(n, &mut f);
        f.sort_unstable();
        assert_eq!(f, [4_294_967_279, 4_294_967_291]);
        assert!(is_prime(18_446_744_073_709_551_557));
    }

    #[test]
    fn product_is_exact_and_bases_respect_threshold() {
        for (size, t) in [
            (10_000_000_000u64, 10),
            (999_999_937, 30),
            (1 << 40, 16),
            (720, 2),
        ] {
            let bases = find_best_bases(size, t).unwrap();
            assert_eq!(bases.iter().map(|&b| u64::from(b)).product::<u64>(), size);
            assert!(bases.iter().all(|&b| u64::from(b) >= t));
            assert!(bases.windows(2).all(|w| w[0] <= w[1]));
        }
        assert_eq!(find_best_bases(999_999_937, 30).unwrap(), [999_999_937]);
    }

    #[test]
    fn refuses_sizes_below_threshold() {
        assert_eq!(
            find_best_bases(20, 30),
            Err(SetupError::NoBases {
                size: 20,
                threshold: 30
            })
        );
        assert!(find_best_bases(100, 1).is_err());
    }
}
