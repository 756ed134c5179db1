//! Riffpe and RiffpeX written straight from `SPEC.md`: byte buffers, a full sort per digit step
//! and one AES call per block. Slow and obviously right: every fast path is tested against it.
//! It panics on invalid input; checking input is the real crate's job.

use cipher::{Array, BlockCipherEncrypt, KeyInit};

/// The domain and the scheme, which differ in their set-up prefix.
#[derive(Clone, Copy, Debug)]
pub enum Scheme<'a> {
    /// Riffpe(n, l): `digits` digits below `radix`.
    Riffpe {
        /// n
        radix: u32,
        /// l
        digits: usize,
    },
    /// RiffpeX(r_0 .. r_{l-1}).
    RiffpeX(&'a [u32]),
}

/// `E_K`: AES-128, -192 or -256 by key length.
enum Key {
    Aes128(aes::Aes128),
    Aes192(aes::Aes192),
    Aes256(aes::Aes256),
}

impl Key {
    fn new(key: &[u8]) -> Key {
        match key.len() {
            16 => Key::Aes128(aes::Aes128::new_from_slice(key).unwrap()),
            24 => Key::Aes192(aes::Aes192::new_from_slice(key).unwrap()),
            32 => Key::Aes256(aes::Aes256::new_from_slice(key).unwrap()),
            n => panic!("reference: {n}-byte key"),
        }
    }

    fn encrypt(&self, block: [u8; 16]) -> [u8; 16] {
        let mut b = Array(block);
        match self {
            Key::Aes128(c) => c.encrypt_block(&mut b),
            Key::Aes192(c) => c.encrypt_block(&mut b),
            Key::Aes256(c) => c.encrypt_block(&mut b),
        }
        b.0
    }
}

/// SPEC `pkcs7(X)`: X followed by p copies of p, p = 16 - len(X) mod 16.
fn pkcs7(mut x: Vec<u8>) -> Vec<u8> {
    let p = 16 - x.len() % 16;
    x.extend(std::iter::repeat_n(p as u8, p));
    x
}

/// SPEC `cbcmac(IV, X)`: the last block of AES-CBC(X) with IV.
fn cbcmac(key: &Key, iv: [u8; 16], x: &[u8]) -> [u8; 16] {
    assert_eq!(x.len() % 16, 0);
    let mut state = iv;
    for chunk in x.chunks(16) {
        for (s, b) in state.iter_mut().zip(chunk) {
            *s ^= b;
        }
        state = key.encrypt(state);
    }
    state
}

/// A keyed Riffpe or RiffpeX with its set-up done.
#[allow(missing_debug_implementations)] // holds a key
pub struct Reference {
    key: Key,
    radices: Vec<u32>,
    bytes_per_value: usize,
    width: usize,
    iv0: [u8; 16],
}

impl Reference {
    /// SPEC "Set-up" for `scheme` under `key` and `tweak`, with `b = bytes_per_value`.
    pub fn new(scheme: Scheme<'_>, key: &[u8], tweak: &[u8], bytes_per_value: usize) -> Self {
        let key = Key::new(key);
        let mut prefix = Vec::new();
        let radices = match scheme {
            Scheme::Riffpe { radix, digits } => {
                // LE32(n) || LE32(l) || LE64(len(T)) || T
                prefix.extend(radix.to_le_bytes());
                prefix.extend((digits as u32).to_le_bytes());
                prefix.extend((tweak.len() as u64).to_le_bytes());
                vec![radix; digits]
            }
            Scheme::RiffpeX(radices) => {
                // LE32(r_0) || ':' || … || LE32(r_{l-1}) || '^' || T
                for (i, r) in radices.iter().enumerate() {
                    if i > 0 {
                        prefix.push(b':');
                    }
                    prefix.extend(r.to_le_bytes());
                }
                prefix.push(b'^');
                radices.to_vec()
            }
        };
        prefix.extend(tweak);
        // IV0 = cbcmac(0^16, pkcs7(prefix))
        let iv0 = cbcmac(&key, [0; 16], &pkcs7(prefix));
        // Element width w: by the largest radix.
        let width = match *radices.iter().max().unwrap() {
            0..=255 => 1,
            256..=65535 => 2,
            _ => 4,
        };
        Reference {
            key,
            radices,
            bytes_per_value,
            width,
            iv0,
        }
    }

    /// SPEC `LEw(v)`.
    fn lew(&self, v: u32) -> Vec<u8> {
        v.to_le_bytes()[..self.width].to_vec()
    }

    /// SPEC "One digit step": the pairs `(v_k, k)` of step (i, f) in sorted order, as `k`s.
    fn order(&self, m: &[u32], i: usize, f: u32) -> Vec<usize> {
        // buf = pkcs7(LEw(m_0) || … || LEw(m_{l-1}) || LEw(i)), slot i holding LEw(f)
        let mut buf = Vec::new();
        for (j, &d) in m.iter().enumerate() {
            buf.extend(self.lew(if j == i { f } else { d }));
        }
        buf.extend(self.lew(i as u32));
        // S_0 = cbcmac(IV0, buf); S_j+1 = E_K(S_j); keystream = S_1 || S_2 || …
        let mut s = cbcmac(&self.key, self.iv0, &pkcs7(buf));
        let n = self.radices[i] as usize;
        let b = self.bytes_per_value;
        let mut keystream = Vec::new();
        for _ in 0..(n * b).div_ceil(16) {
            s = self.key.encrypt(s);
            keystream.extend(s);
        }
        // v_k = keystream[k·b .. (k+1)·b]; sort (v_k, k) big-endian, ties by smaller k.
        let mut pairs: Vec<(&[u8], usize)> = (0..n)
            .map(|k| (&keystream[k * b..(k + 1) * b], k))
            .collect();
        pairs.sort();
        pairs.into_iter().map(|(_, k)| k).collect()
    }

    /// SPEC "Encrypt": f = 0, 1; i ascending; m_i = π_{i,f}(m_i).
    pub fn encrypt(&self, m: &mut [u32]) {
        for f in [0, 1] {
            for i in 0..m.len() {
                let order = self.order(m, i, f);
                m[i] = order[m[i] as usize] as u32;
            }
        }
    }

    /// SPEC "Decrypt": f = 1, 0; i descending; m_i = π⁻¹_{i,f}(m_i).
    pub fn decrypt(&self, m: &mut [u32]) {
        for f in [1, 0] {
            for i in (0..m.len()).rev() {
                let order = self.order(m, i, f);
                m[i] = order.iter().position(|&k| k == m[i] as usize).unwrap() as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC "Integers as messages": the reference CLI's first example, 1234123456785678.
    #[test]
    fn spec_example() {
        let key: Vec<u8> = (0..16).map(|i| i * 0x11).collect();
        let fpe = Reference::new(
            Scheme::Riffpe {
                radix: 100,
                digits: 8,
            },
            &key,
            b"",
            16,
        );
        let mut m = [78, 56, 78, 56, 34, 12, 34, 12];
        fpe.encrypt(&mut m);
        assert_eq!(m, [28, 36, 5, 6, 31, 54, 58, 51]); // 5158543106053628
        fpe.decrypt(&mut m);
        assert_eq!(m, [78, 56, 78, 56, 34, 12, 34, 12]);
    }
}
