//! Saving a private table to resume a stopped search, and loading it back
//! checked against its checksum.

use super::{Bucket, MIN_BUCKETS, Tt, WAYS};

/// FNV-1a over the count of buckets, the entries in use and the buckets'
/// bytes as 64-bit little-endian words (the bytes are whole buckets, so
/// whole words), then the byte length.
fn body_checksum(n: u64, used: u64, raw: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    h = (h ^ n).wrapping_mul(PRIME);
    h = (h ^ used).wrapping_mul(PRIME);
    let mut words = raw.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))).wrapping_mul(PRIME);
    }
    for &b in words.remainder() {
        h = (h ^ b as u64).wrapping_mul(PRIME);
    }
    (h ^ raw.len() as u64).wrapping_mul(PRIME)
}

impl Tt {
    /// Writes the buckets in use (for resuming a stopped search).
    pub fn save(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        if self.buckets.shared {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a shared table is not saved (other processes write it)",
            ));
        }
        w.write_all(&(self.n as u64).to_le_bytes())?;
        w.write_all(&self.used.to_le_bytes())?;
        w.write_all(self.raw())
    }

    /// The checksum of what [`Tt::save`] writes (the buckets in use and
    /// their count), for [`Tt::load`] to check.
    pub fn checksum(&self) -> u64 {
        if self.buckets.shared {
            return 0;
        }
        body_checksum(self.n as u64, self.used, self.raw())
    }

    /// The bytes of the buckets in use.
    fn raw(&self) -> &[u8] {
        let bytes = self.n * std::mem::size_of::<Bucket>();
        // SAFETY: the first `n` buckets are initialised plain data (u64 and
        // u32 fields, no padding) inside the mapping.
        unsafe { std::slice::from_raw_parts(self.buckets.ptr as *const u8, bytes) }
    }

    /// Reads buckets written by [`Tt::save`] into a fresh table (nothing
    /// put yet), checking them against `checksum` ([`Tt::checksum`] at the
    /// save) and checking that nothing follows them. `Ok(false)` (table
    /// untouched) if they do not fit in this table's budget. On any error
    /// (a short read, a mismatch, trailing bytes) the table is left empty
    /// and fresh: nothing of a damaged file is ever used.
    pub fn load(&mut self, r: &mut impl std::io::Read, checksum: u64) -> std::io::Result<bool> {
        use std::io::{Error, ErrorKind};
        let mut b8 = [0u8; 8];
        if self.buckets.shared {
            return Ok(false);
        }
        r.read_exact(&mut b8)?;
        let n = u64::from_le_bytes(b8);
        r.read_exact(&mut b8)?;
        let used = u64::from_le_bytes(b8);
        if n > self.buckets.len as u64 || !n.is_power_of_two() || n < MIN_BUCKETS as u64 {
            return Ok(false);
        }
        let n = n as usize;
        if used > (n * WAYS) as u64 {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!("{used} entries in use in {n} buckets"),
            ));
        }
        let bytes = n * std::mem::size_of::<Bucket>();
        // SAFETY: in bounds of the mapping; any bytes are a valid Bucket
        // (plain integers).
        let raw = unsafe { std::slice::from_raw_parts_mut(self.buckets.ptr as *mut u8, bytes) };
        let result = match r.read_exact(raw) {
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                Err(Error::new(ErrorKind::InvalidData, "the file is truncated"))
            }
            Err(e) => Err(e),
            Ok(()) if body_checksum(n as u64, used, raw) != checksum => Err(Error::new(
                ErrorKind::InvalidData,
                "checksum mismatch (the file is damaged)",
            )),
            Ok(()) => match r.read(&mut b8) {
                Ok(0) => Ok(()),
                Ok(_) => Err(Error::new(
                    ErrorKind::InvalidData,
                    "unexpected bytes after the table",
                )),
                Err(e) => Err(e),
            },
        };
        if let Err(e) = result {
            // Back to a fresh table: it was all zero before the read.
            raw.fill(0);
            return Err(e);
        }
        self.n = n;
        self.mask = n as u64 - 1;
        self.used = used;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tt::TtValue;

    #[test]
    fn saved_tables_load_only_with_their_checksum() {
        let mut t = Tt::with_bytes(8 << 20);
        let v = TtValue {
            pn: 0,
            dn: 42,
            work: 4,
        };
        for k in 0..1000u64 {
            t.put(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), v);
        }
        let mut bytes = Vec::new();
        t.save(&mut bytes).unwrap();
        let sum = t.checksum();
        let key = 5u64.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // Intact: loads.
        let mut u = Tt::with_bytes(8 << 20);
        assert!(u.load(&mut &bytes[..], sum).unwrap());
        assert_eq!(u.get(key), Some(v));
        assert_eq!(u.used(), t.used());
        // A flipped byte, a cut, a trailing byte, a wrong checksum: an
        // error, and the table stays empty.
        let mut flipped = bytes.clone();
        flipped[16 + 12] ^= 1;
        let cut = bytes[..bytes.len() - 1].to_vec();
        let mut longer = bytes.clone();
        longer.push(0);
        for (what, b, s) in [
            ("flipped", flipped, sum),
            ("cut", cut, sum),
            ("trailing", longer, sum),
            ("checksum", bytes.clone(), sum ^ 1),
        ] {
            let mut u = Tt::with_bytes(8 << 20);
            assert!(u.load(&mut &b[..], s).is_err(), "{what}");
            assert_eq!(u.used(), 0, "{what}");
            assert_eq!(u.get(key), None, "{what}");
        }
        // Too big for the budget: not loaded, no error.
        let mut small = Tt::with_bytes(1 << 16);
        let mut big = Tt::with_bytes(64 << 20);
        for k in 0..200_000u64 {
            big.put(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), v);
        }
        let mut bytes = Vec::new();
        big.save(&mut bytes).unwrap();
        if big.bytes_in_use() > small.bytes() {
            assert!(!small.load(&mut &bytes[..], big.checksum()).unwrap());
        }
    }
}
