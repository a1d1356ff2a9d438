"""Answer extraction with item-by-item parity with the official MMMU and CMMMU parsers (spec §3.4-3.7, §4.4-4.5)."""
