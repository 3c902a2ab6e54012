"""Issue 16 item 5: the structural requirements of PDF/A-2b (ISO 19005-2 level B) that can be
checked without a validator (veraPDF is not packaged here), on the files ``qmcredit form313``
writes: the form of one location, of several locations (L6) and the worksheet."""

from __future__ import annotations

import struct
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import pikepdf
import pytest

from ..conftest import EXAMPLES, example_file
from .conftest import binary

EXE = Path(sys.executable).parent / "qmcredit"
CASES = {
    "one location, --all": (EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--all"),
    "several locations": (example_file("next/07-two-locations-shared-room"), "--all"),
    "insurer, one period": (EXAMPLES / "04-insurer.claim.json", "--period", "2005"),
}


@pytest.fixture(scope="module", params=list(CASES))
def written(request, tmp_path_factory) -> dict[str, bytes]:
    """The form and its worksheet as the command writes them."""
    out = tmp_path_factory.mktemp("pdfa") / "form.pdf"
    claim, *choice = CASES[request.param]
    r = subprocess.run([str(EXE), "form313", str(claim), *choice, "--out", str(out), "--worksheet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return {"form": out.read_bytes(), "worksheet": out.with_name("form.worksheet.pdf").read_bytes()}


@pytest.mark.parametrize("which", ["form", "worksheet"])
def test_xmp_says_pdfa_2b_and_matches_the_info_dictionary(written, which):
    """ISO 19005-2 6.6: XMP in the catalogue, unfiltered, pdfaid part 2 conformance B, and each Info
    entry equal to its XMP property; the document ID is the trailer's file ID."""
    data = written[which]
    assert data.startswith(b"%PDF-1.7\n%") and all(b > 127 for b in data.split(b"\n")[1][1:5])
    with pikepdf.open(BytesIO(data)) as pdf:
        assert "/Filter" not in pdf.Root.Metadata.stream_dict and not pdf.is_encrypted
        meta, info = pdf.open_metadata(), pdf.docinfo
        assert (meta["pdfaid:part"], meta["pdfaid:conformance"]) == ("2", "B")
        assert meta["dc:title"] == str(info.Title) and meta["dc:creator"] == [str(info.Author)]
        assert meta["dc:description"] == str(info.Subject)
        assert meta["xmp:CreatorTool"] == str(info.Creator) and meta["pdf:Producer"] == str(info.Producer)
        for key, field in (("/CreationDate", "xmp:CreateDate"), ("/ModDate", "xmp:ModifyDate")):
            assert pikepdf.models.metadata.decode_pdf_date(str(info[key])).isoformat() == meta[field]
        assert set(info.keys()) <= {"/Title", "/Author", "/Subject", "/Creator", "/Producer", "/CreationDate", "/ModDate"}
        assert meta["xmpMM:DocumentID"].replace("uuid:", "").replace("-", "") == bytes(pdf.trailer.ID[0]).hex()


@pytest.mark.parametrize("which", ["form", "worksheet"])
def test_output_intent_with_an_embedded_srgb_profile(written, which):
    """6.2.2-6.2.4: one GTS_PDFA1 OutputIntent whose ICC profile is an RGB display profile (N 3,
    ICC 4.2, which ISO 19005-2 refers to) that LittleCMS reads; the pages use only RGB and gray."""
    from PIL import ImageCms

    with pikepdf.open(BytesIO(written[which])) as pdf:
        (intent,) = list(pdf.Root.OutputIntents)
        assert intent.S == pikepdf.Name.GTS_PDFA1 and str(intent.OutputConditionIdentifier) == "sRGB IEC61966-2.1"
        icc = intent.DestOutputProfile.read_bytes()
        assert intent.DestOutputProfile.N == 3 and icc[36:40] == b"acsp" and icc[12:20] == b"mntrRGB " and icc[8:10] == b"\x04\x20"
        assert struct.unpack(">I", icc[:4])[0] == len(icc)
        assert "sRGB" in ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(BytesIO(icc)))
        for page in pdf.pages:
            ops = {str(op) for _, op in pikepdf.parse_content_stream(page)}
            assert not ops & {"k", "K", "cs", "CS", "sc", "scn", "SC", "SCN", "gs", "Do", "BI"}, ops


@pytest.mark.parametrize("which", ["form", "worksheet"])
def test_fonts_embedded_and_nothing_transparent(written, which, tmp_path):
    """6.2.11: every font embedded (``pdffonts``); a symbolic TrueType font has no Encoding and one
    cmap subtable; 6.2.10 and 6.3: no soft masks, constant alpha, groups, annotations or actions."""
    src = tmp_path / "x.pdf"
    src.write_bytes(written[which])
    rows = subprocess.run([binary("pdffonts"), str(src)], check=True, capture_output=True, text=True, timeout=60).stdout.splitlines()[2:]
    assert rows and all(r.split()[-5] == "yes" for r in rows), rows
    with pikepdf.open(BytesIO(written[which])) as pdf:
        for obj in pdf.objects:
            d = obj.stream_dict if isinstance(obj, pikepdf.Stream) else obj if isinstance(obj, pikepdf.Dictionary) else None
            if d is None:
                continue
            assert not {"/SMask", "/CA", "/ca", "/Group", "/Annots", "/AA", "/JS", "/EmbeddedFiles"} & set(d.keys()), dict(d)
            if d.get("/Subtype") == "/TrueType":
                font = d.FontDescriptor.FontFile2.read_bytes()
                tables = {font[12 + 16 * i:16 + 16 * i]: struct.unpack(">I", font[20 + 16 * i:24 + 16 * i])[0]
                          for i in range(struct.unpack(">H", font[4:6])[0])}
                cmaps = struct.unpack(">H", font[tables[b"cmap"] + 2:tables[b"cmap"] + 4])[0]
                assert int(d.FontDescriptor.Flags) & 4 and "/Encoding" not in d and cmaps == 1


def test_same_claim_same_bytes(tmp_path):
    claim, *choice = CASES["several locations"]
    outs = []
    for k in range(2):
        out = tmp_path / f"{k}.pdf"
        subprocess.run([str(EXE), "form313", str(claim), *choice, "--out", str(out)], check=True, capture_output=True, timeout=300)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
