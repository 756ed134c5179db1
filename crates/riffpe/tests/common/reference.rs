//! A plain Riffpe written straight from SPEC.md: byte buffers, a full sort per digit step and one
//! `encrypt_block` call per AES block. Slow and obviously right; the fast path is tested against it.

use cipher::{Array, BlockCipherEncrypt, KeyInit};

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

    /// E_K(B)
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

/// pkcs7(X): X followed by p copies of p, p = 16 - len(X) mod 16.
fn pkcs7(mut x: Vec<u8>) -> Vec<u8> {
    let p = 16 - x.len() % 16;
    x.extend(std::iter::repeat_n(p as u8, p));
    x
}

/// cbcmac(IV, X): last block of AES-CBC(X) with IV.
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

pub struct Reference {
    key: Key,
    radices: Vec<u32>,
    bytes_per_value: usize,
    width: usize,
    iv0: [u8; 16],
}

impl Reference {
    /// Riffpe(n, l) when `mixed` is false (radices all equal n), else RiffpeX(radices).
    pub fn new(
        radices: &[u32],
        mixed: bool,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Self {
        let key = Key::new(key);
        let max = *radices.iter().max().unwrap();
        let width = if max < 256 {
            1
        } else if max < 65536 {
            2
        } else {
            4
        };
        let mut prefix = Vec::new();
        if mixed {
            for (i, r) in radices.iter().enumerate() {
                if i > 0 {
                    prefix.push(b':');
                }
                prefix.extend(r.to_le_bytes());
            }
            prefix.push(b'^');
        } else {
            prefix.extend(radices[0].to_le_bytes());
            prefix.extend((radices.len() as u32).to_le_bytes());
            prefix.extend((tweak.len() as u64).to_le_bytes());
        }
        prefix.extend(tweak);
        let iv0 = cbcmac(&key, [0; 16], &pkcs7(prefix));
        Reference {
            key,
            radices: radices.to_vec(),
            bytes_per_value,
            width,
            iv0,
        }
    }

    fn lew(&self, v: u32) -> Vec<u8> {
        v.to_le_bytes()[..self.width].to_vec()
    }

    /// The sorted order of pairs (v_k, k) for step (i, f): order[x] = k.
    fn order(&self, m: &[u32], i: usize, f: u32) -> Vec<usize> {
        let mut buf = Vec::new();
        for (j, &d) in m.iter().enumerate() {
            buf.extend(self.lew(if j == i { f } else { d }));
        }
        buf.extend(self.lew(i as u32));
        let mut s = cbcmac(&self.key, self.iv0, &pkcs7(buf));
        let n = self.radices[i] as usize;
        let b = self.bytes_per_value;
        let blocks = (n * b).div_ceil(16);
        let mut keystream = Vec::new();
        for _ in 0..blocks {
            s = self.key.encrypt(s);
            keystream.extend(s);
        }
        let mut pairs: Vec<(&[u8], usize)> = (0..n)
            .map(|k| (&keystream[k * b..(k + 1) * b], k))
            .collect();
        pairs.sort();
        pairs.into_iter().map(|(_, k)| k).collect()
    }

    pub fn encrypt(&self, m: &mut [u32]) {
        for f in [0, 1] {
            for i in 0..m.len() {
                let order = self.order(m, i, f);
                m[i] = order[m[i] as usize] as u32;
            }
        }
    }

    pub fn decrypt(&self, m: &mut [u32]) {
        for f in [1, 0] {
            for i in (0..m.len()).rev() {
                let order = self.order(m, i, f);
                m[i] = order.iter().position(|&k| k == m[i] as usize).unwrap() as u32;
            }
        }
    }
}
