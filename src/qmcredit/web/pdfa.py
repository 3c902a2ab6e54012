"""The structural parts of PDF/A-2b (ISO 19005-2, level B) added to a reportlab PDF with pikepdf.

reportlab (open-source) writes no PDF/A; this adds what level B asks of a file like ours:
XMP metadata in the catalogue, unfiltered, with ``pdfaid:part`` 2 and ``pdfaid:conformance`` B and
the Dublin Core / XMP / PDF fields equal to the Info dictionary's (title, author, subject, creator
tool, producer, dates); ``xmpMM:DocumentID`` and ``InstanceID`` from the trailer's file ID; PDF 1.7 (for the ICC 4 profile); an
OutputIntent (``GTS_PDFA1``) with an embedded sRGB ICC profile, so that the device RGB and gray
colours the pages use are defined. reportlab already embeds every font (Bitstream Vera, subset) and
draws nothing transparent. No validator is at hand (veraPDF is not packaged here): what is checked
is listed in docs/form313.md and tested in tests/web/test_pdfa.py.

The ICC profile is LittleCMS's built-in sRGB (through Pillow, reportlab's own dependency; "No
copyright, use freely"), with a fixed creation date so that the same claim gives the same bytes,
and its version stated as 4.2, the ICC.1:2004-10 that ISO 19005-2 refers to (the tags it has,
``mluc``, ``para``, ``sf32``, ``XYZ``, ``chrm``, are all of that version).
"""

from __future__ import annotations

import struct
from functools import cache
from io import BytesIO

import pikepdf

ICC_DATE = struct.pack(">6H", 2026, 1, 1, 0, 0, 0)
ICC_VERSION = bytes((4, 0x20, 0, 0))
OUTPUT_CONDITION = "sRGB IEC61966-2.1"


@cache
def srgb_profile() -> bytes:
    """The sRGB ICC profile embedded in the OutputIntent (deterministic: fixed date, version 4.2)."""
    from PIL import ImageCms

    icc = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    icc[8:12] = ICC_VERSION
    icc[24:36] = ICC_DATE
    icc[84:100] = bytes(16)  # profile ID: not computed (allowed by ICC.1)
    return bytes(icc)


def _text(obj) -> str:
    return str(obj) if obj is not None else ""


def pdfa_2b(data: bytes) -> bytes:
    """``data`` (a PDF reportlab wrote in invariant mode) with the XMP metadata and OutputIntent of
    PDF/A-2b; deterministic: the same input gives the same bytes."""
    with pikepdf.open(BytesIO(data)) as pdf:
        info = pdf.docinfo
        for key in ("/Keywords", "/Trapped"):  # empty or default: left out rather than repeated in the XMP
            if key in info and str(info[key]) in ("", "/False"):
                del info[key]
        file_id = bytes(pdf.trailer.ID[0]).hex()  # reportlab's: a digest of the document (invariant mode)
        with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False) as meta:
            meta["pdfaid:part"] = "2"
            meta["pdfaid:conformance"] = "B"
            meta["dc:title"] = _text(info.get("/Title"))
            meta["dc:creator"] = [_text(info.get("/Author"))]
            meta["dc:description"] = _text(info.get("/Subject"))
            meta["xmp:CreatorTool"] = _text(info.get("/Creator"))
            meta["pdf:Producer"] = _text(info.get("/Producer"))
            for key, field in (("/CreationDate", "xmp:CreateDate"), ("/ModDate", "xmp:ModifyDate")):
                if key in info:
                    meta[field] = pikepdf.models.metadata.decode_pdf_date(str(info[key])).isoformat()
            meta["xmp:MetadataDate"] = meta["xmp:ModifyDate"]
            meta["xmpMM:DocumentID"] = f"uuid:{file_id[:8]}-{file_id[8:12]}-{file_id[12:16]}-{file_id[16:20]}-{file_id[20:32]}"
            meta["xmpMM:InstanceID"] = meta["xmpMM:DocumentID"]
        profile = pikepdf.Stream(pdf, srgb_profile())
        profile["/N"] = 3
        pdf.Root.OutputIntents = pikepdf.Array([pdf.make_indirect(pikepdf.Dictionary(
            Type=pikepdf.Name.OutputIntent, S=pikepdf.Name.GTS_PDFA1, OutputConditionIdentifier=OUTPUT_CONDITION,
            Info=OUTPUT_CONDITION, RegistryName="http://www.color.org", DestOutputProfile=pdf.make_indirect(profile)))])
        out = BytesIO()
        pdf.save(out, deterministic_id=True, min_version="1.7", object_stream_mode=pikepdf.ObjectStreamMode.disable, fix_metadata_version=True)
        return out.getvalue()
