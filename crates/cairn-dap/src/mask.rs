//! Masking of values that change from run to run without meaning.
//!
//! Adapters render object identities and pointers as hexadecimal addresses:
//! `<Order object at 0x7f3a2b1c4d50>` (Python), `0x00007ffd5e8c1a2c` (lldb pointers),
//! `0x000055555555602d "hello"` (lldb `char *`). Two captures of the same state almost never
//! agree on them, so a diff that compared them raw would report every object as modified.

/// Fewest hex digits that make a `0x` number an address. Real addresses have 6 or more
/// (even a non-PIE heap starts around `0x400000`); small hex constants stay visible.
const MIN_ADDRESS_DIGITS: usize = 6;

/// Placeholder that replaces each address.
const MASK: &str = "0x…";

/// `text` with every hexadecimal address replaced by a fixed placeholder.
pub(crate) fn mask_volatile(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let starts_number = bytes[i] == b'0'
            && matches!(bytes[i + 1], b'x' | b'X')
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if starts_number {
            let digits = bytes[i + 2..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if digits >= MIN_ADDRESS_DIGITS {
                // Slicing at ASCII positions always lands on char boundaries.
                out.push_str(&text[copied..i]);
                out.push_str(MASK);
                i += 2 + digits;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::mask_volatile;

    #[test]
    fn masks_python_object_addresses() {
        assert_eq!(
            mask_volatile("<__main__.Order object at 0x7f3a2b1c4d50>"),
            "<__main__.Order object at 0x…>"
        );
        assert_eq!(
            mask_volatile("<Order object at 0x7f0000000001>"),
            mask_volatile("<Order object at 0x7f0000000abc>")
        );
    }

    #[test]
    fn masks_native_pointers_and_keeps_the_string_they_point_to() {
        assert_eq!(mask_volatile("0x00007ffd5e8c1a2c"), "0x…");
        assert_eq!(mask_volatile("0x000055555555602d \"hello\""), "0x… \"hello\"");
    }

    #[test]
    fn leaves_small_constants_and_other_text_alone() {
        for text in ["0x10", "42", "\"0x\"", "abc0x12345678", "été 0xff", "", "0"] {
            assert_eq!(mask_volatile(text), text);
        }
    }
}
