"""segmenter.decode: HTML bytes -> text, charset from BOM / header / meta / detection."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.decode import (
    CharsetSource,
    Decoded,
    codec_for_label,
    decode_html,
    find_meta_charset,
    utf16_without_bom,
)

GERMAN = (
    "Liebe Grüße aus München! Die Straße war gesperrt, weil die Bürger über die "
    "Größe der Brücke abstimmten. Schöne Äpfel, süße Birnen und frische Öle gibt es "
    "auf dem Markt für wenig Geld. Übermorgen fährt der Zug früher ab."
)
RUSSIAN = "Привет, мир! Это страница о погоде в Москве и о новостях дня."
CHINESE = "朱镕基在北京人民大会堂会见了来访的客人，双方就经济合作交换了意见。"


def html(body: str, head: str = "") -> str:
    return (f"<!DOCTYPE html><html><head>{head}<title>t</title></head>"
            f"<body><p>{body}</p></body></html>")


# --------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("x-gbk", "gb18030"),
        ("ISO-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("ascii", "cp1252"),
        ("windows-1252", "cp1252"),
        ("big5", "big5hkscs"),
        ("x-sjis", "cp932"),
        ("Shift_JIS", "cp932"),
        ("euc-kr", "cp949"),
        ("UTF8", "utf-8"),
        ('"utf-8"', "utf-8"),
        ("koi8-r", "koi8-r"),
        ("windows-1251", "cp1251"),
        ("euc-jp", "euc_jp"),
    ],
)
def test_codec_for_label_maps_to_the_superset_browsers_use(label: str, codec: str) -> None:
    assert codec_for_label(label) == codec


@pytest.mark.parametrize("label", [None, "", "no-such-charset", "base64", "rot13", "zlib",
                                   "hex", "utf-7", "unicode_escape", "idna", "a" * 60,
                                   "utf\x00-8", "utf 8"])
def test_codec_for_label_refuses_unknown_and_non_text_codecs(label: str | None) -> None:
    assert codec_for_label(label) is None


def test_meta_charset_is_found_after_a_long_head() -> None:
    head = "<script>" + "var x = 1;\n" * 1000 + "</script>"  # ~11 KB before the meta
    body = html("x", head + '<meta http-equiv="Content-Type" content="text/html; charset=gbk">')
    assert find_meta_charset(body.encode()) == "gb18030"


def test_meta_utf16_label_means_utf8() -> None:
    assert find_meta_charset(b'<meta charset="utf-16">') == "utf-8"


# --------------------------------------------------------------------------- order of evidence


def test_http_header_charset_is_used_when_it_decodes() -> None:
    body = html(RUSSIAN, '<meta charset="utf-8">').encode("cp1251")
    decoded = decode_html(body, "windows-1251")
    assert decoded == Decoded(html(RUSSIAN, '<meta charset="utf-8">'), "cp1251",
                              CharsetSource.HTTP_HEADER)


def test_header_utf8_on_gbk_bytes_is_not_trusted() -> None:
    text = html(CHINESE * 5)
    decoded = decode_html(text.encode("gbk"), "utf-8")
    assert decoded.source is CharsetSource.DETECTED
    assert decoded.charset == "gb18030"
    assert CHINESE in decoded.text


def test_unknown_header_charset_falls_through_to_meta() -> None:
    text = html(GERMAN, '<meta charset="iso-8859-1">')
    decoded = decode_html(text.encode("cp1252"), "x-no-such")
    assert (decoded.text, decoded.source, decoded.charset) == (text, CharsetSource.META, "cp1252")


def test_meta_that_lies_is_not_trusted() -> None:
    # Declares UTF-8, is windows-1252: strict UTF-8 fails -> detection.
    text = html(GERMAN * 3, '<meta charset="utf-8">')
    decoded = decode_html(text.encode("cp1252"))
    assert decoded.source is CharsetSource.DETECTED
    assert "Liebe Grüße aus München" in decoded.text
    assert "Übermorgen fährt" in decoded.text


def test_single_byte_label_on_valid_utf8_means_utf8() -> None:
    # An old template's latin-1 meta on a UTF-8 page: cp1252 "decodes" anything, but bytes
    # that are valid UTF-8 with multi-byte characters are UTF-8.
    text = html(GERMAN, '<meta charset="iso-8859-1">')
    decoded = decode_html(text.encode("utf-8"))
    assert (decoded.text, decoded.charset, decoded.source) == (text, "utf-8",
                                                               CharsetSource.DETECTED)


def test_legacy_multibyte_label_on_valid_utf8_means_utf8() -> None:
    text = html(CHINESE, '<meta charset="gbk">')
    decoded = decode_html(text.encode("utf-8"), "gb2312")
    assert (decoded.text, decoded.charset, decoded.source) == (text, "utf-8",
                                                               CharsetSource.DETECTED)


def test_ascii_page_with_latin1_meta_keeps_the_meta() -> None:
    decoded = decode_html(b'<meta charset="iso-8859-1"><p>plain ascii</p>')
    assert (decoded.charset, decoded.source) == ("cp1252", CharsetSource.META)


def test_gb2312_label_on_gbk_only_characters_decodes_them() -> None:
    # 镕 is in GBK but not in GB2312; real pages labelled gb2312 contain such characters.
    text = html(CHINESE, '<meta charset="gb2312">')
    with pytest.raises(UnicodeEncodeError):
        CHINESE.encode("gb2312")
    decoded = decode_html(text.encode("gbk"))
    assert (decoded.text, decoded.charset, decoded.source) == (text, "gb18030",
                                                               CharsetSource.META)


def test_utf8_bom_wins_over_header_and_meta() -> None:
    text = html(CHINESE, '<meta charset="gbk">')
    decoded = decode_html(b"\xef\xbb\xbf" + text.encode("utf-8"), "iso-8859-1")
    assert decoded == Decoded(text, "utf-8", CharsetSource.BOM)


def test_utf16_bom() -> None:
    text = html(RUSSIAN)
    decoded = decode_html(text.encode("utf-16"))  # writes a BOM
    assert (decoded.text, decoded.source) == (text, CharsetSource.BOM)


@pytest.mark.parametrize("label", ["utf-16", "UTF-16LE", "utf-16be", "utf-32"])
def test_a_header_that_lies_about_utf16_is_not_trusted(label: str) -> None:
    """Issue 44: UTF-8 bytes under a UTF-16 header "decode" without an error as CJK noise;
    the declaration is dropped and the bytes are read as what they are."""
    text = '<html><body><ul><li><a href="https://a.org/">Grüße aus Köln</a></li></ul></body></html>'
    decoded = decode_html(text.encode("utf-8"), label)
    assert (decoded.text, decoded.charset, decoded.source) == (text, "utf-8", CharsetSource.DETECTED)
    wide = decode_html(text.encode("utf-16-le"), label if "32" not in label else "utf-16le")
    assert wide.text == text


def test_utf16_without_bom_is_detected() -> None:
    text = html(GERMAN)
    assert utf16_without_bom(text.encode("utf-16-be")) == "utf-16-be"
    decoded = decode_html(text.encode("utf-16-le"))
    assert (decoded.text, decoded.charset) == (text, "utf-16-le")


def test_plain_utf8_without_declaration_is_detected_cheaply() -> None:
    text = html(CHINESE + GERMAN)
    assert decode_html(text.encode()) == Decoded(text, "utf-8", CharsetSource.DETECTED)


def test_utf8_with_a_few_stray_latin1_bytes_stays_utf8() -> None:
    # A UTF-8 page with one windows-1252 byte pasted in by a template (seen on real pages
    # in ../shared/data/web): reading it all as a legacy code page would garble every
    # other non-ASCII character.
    body = html(GERMAN).encode("utf-8") + b"<footer>K\xfcche</footer>"
    decoded = decode_html(body, "utf-8")
    assert (decoded.charset, decoded.source) == ("utf-8", CharsetSource.DETECTED)
    assert GERMAN in decoded.text
    assert "K\ufffdche" in decoded.text


def test_multibyte_character_cut_at_the_end_does_not_distrust_the_header() -> None:
    body = html(CHINESE).encode("utf-8") + "中".encode("utf-8")[:2]  # size cap cut
    decoded = decode_html(body, "utf-8")
    assert decoded.source is CharsetSource.HTTP_HEADER
    assert decoded.text.endswith("</html>\ufffd")


def test_empty_body() -> None:
    assert decode_html(b"") == Decoded("", "utf-8", CharsetSource.FALLBACK)
    assert decode_html(b"", "gbk") == Decoded("", "utf-8", CharsetSource.FALLBACK)


def test_nul_bytes_become_replacement_characters() -> None:
    decoded = decode_html(b"<p>a\x00b</p>\x00", "utf-8")
    assert decoded.text == "<p>a\ufffdb</p>\ufffd"


def test_nul_bytes_in_a_legacy_page() -> None:
    body = html(CHINESE * 3).encode("gbk").replace(b"<p>", b"<p>\x00\x00")
    decoded = decode_html(body)
    assert "\x00" not in decoded.text
    assert CHINESE in decoded.text


def test_unclosed_script_and_lone_angle_brackets_do_not_hang() -> None:
    body = b"<script>" + b"<" * 200_000 + "é".encode("cp1252") * 10
    decoded = decode_html(body)
    assert decoded.text.startswith("<script><<<")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096), st.one_of(st.none(), st.text(max_size=20),
                                          st.sampled_from(["utf-8", "gbk", "big5", "utf-16",
                                                           "iso-8859-1", "base64"])))
def test_decode_never_raises(body: bytes, http_charset: str | None) -> None:
    decoded = decode_html(body, http_charset)
    assert isinstance(decoded.text, str)
    assert "\x00" not in decoded.text
    assert isinstance(decoded.source, CharsetSource)
    assert codec_for_label(decoded.charset) is not None or decoded.charset.startswith("utf-16")
    # the UTF-8 the segmenter parses without encoding again is exactly the text's
    assert decoded.utf8 is None or decoded.utf8 == decoded.text.encode("utf-8")


@pytest.mark.parametrize("body, kept", [
    ("<p>café</p>".encode(), True),  # strictly valid UTF-8: the body itself
    (b"<p>plain ascii</p>", True),
    ("<p>caf\u00e9\x00</p>".encode(), False),  # a NUL to replace
    ("<p>caf\u00e9".encode()[:-1], False),  # a character cut at the end: completed by U+FFFD
    (b"\xef\xbb\xbf<p>bom</p>", False),  # the byte order mark is dropped from the text
    ("<p>café</p>".encode("cp1252"), False),  # a legacy page
])
def test_the_utf8_body_is_kept_only_when_it_is_the_texts_utf8(body: bytes, kept: bool) -> None:
    decoded = decode_html(body, "utf-8")
    assert (decoded.utf8 is body) is kept


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000))
def test_any_utf8_text_round_trips(text: str) -> None:
    decoded = decode_html(text.encode("utf-8", errors="replace"), "utf-8")
    assert decoded.text == text.encode("utf-8", errors="replace").decode("utf-8").replace(
        "\x00", "\ufffd").removeprefix("\ufeff")


# --------------------------------------------------------------------------- real Chinese pages

_META_DECLARATION = re.compile(r"<meta[^>]*charset[^>]*>", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{4,}")
ZH_ENCODINGS = ("gbk", "gb2312", "big5")


def _zh_pages(shared_data) -> list[Path]:
    return sorted(shared_data("zh/gne-pages").glob("**/*.html"))


def _known_substrings(text: str) -> list[str]:
    """Chinese runs from the page's title, then its text (a few, spread out)."""
    title = _TITLE.search(text)
    runs = _CJK_RUN.findall(title.group(1)) if title else []
    body_runs = _CJK_RUN.findall(text)
    runs += body_runs[:: max(1, len(body_runs) // 10)]
    return runs[:8]


@pytest.mark.parametrize("encoding", ZH_ENCODINGS)
@pytest.mark.parametrize("with_meta", [False, True], ids=["no-meta", "meta"])
def test_real_chinese_pages_in_legacy_encodings_are_readable(shared_data, encoding: str,
                                                             with_meta: bool) -> None:
    """Every GNE page, re-encoded without any HTTP header, decodes to readable Chinese."""
    pages = _zh_pages(shared_data)
    assert len(pages) == 66
    failures = []
    exact = checked = 0
    for page in pages:
        original = page.read_text(encoding="utf-8")
        stripped = _META_DECLARATION.sub("", original)
        if with_meta:
            stripped = stripped.replace("<head>", f'<head><meta charset="{encoding}">', 1)
        body = stripped.encode(encoding, errors="ignore")
        expected_text = body.decode(encoding)
        decoded = decode_html(body)
        exact += decoded.text == expected_text
        # Substrings of what the encoding can represent (Big5 has no simplified forms).
        wanted = _known_substrings(expected_text)
        if not wanted:
            continue
        checked += 1
        missing = [run for run in wanted if run not in decoded.text]
        if missing:
            failures.append((page.name, decoded.charset, decoded.source.value, missing[:1]))
    assert failures == []
    assert checked == 66
    # Quality floor (observed: 66/66 GBK and GB2312, 64/66 Big5 decode to exactly the
    # same text; in the two other Big5 pages a few kana map differently in Big5-HKSCS,
    # which we decode with, than in Python's plain big5).
    assert exact >= (64 if encoding == "big5" else 66)


def test_real_web_pages_decode_without_fallback(shared_data) -> None:
    """The trafilatura pages have no charset in their HTTP header: all must be decoded
    from a BOM, a meta or detection, never the blind fallback (pinned as observed)."""
    from relatedpages.corpus.ingest import Page, read_pages

    charsets: Counter[tuple[str, str]] = Counter()
    for item in read_pages(shared_data("web/trafilatura-pages.warc.gz")):
        assert isinstance(item, Page)
        decoded = decode_html(item.body, item.http_charset)
        charsets[(decoded.source.value, decoded.charset)] += 1
    assert charsets == Counter({
        ("meta", "utf-8"): 898, ("meta", "cp1252"): 24, ("detected", "utf-8"): 22,
        ("byte_order_mark", "utf-8"): 6, ("meta", "cp1250"): 1, ("meta", "gb18030"): 1,
        ("meta", "iso8859-2"): 1})
