"""What makes two spellings of a location the same place: the normalised municipality and street
address. "200 Federal Street, Camden City" and "200  federal st. / Camden" are one location, so a
claim refiled with the address typed differently is still a second filing for it.

The key is the municipality (a qualified municipality's aliases give its name, E2's list in
``law/parameters/municipalities.toml``) and the address, each in Unicode NFKC, case-folded, with
punctuation dropped, whitespace collapsed and the usual street words abbreviated (USPS Publication
28: Street → st, Avenue → ave, North → n, Suite → ste, ...). Numbers and other words stay as
written: "Suite 5" and "Suite 6" are two places.
"""

from __future__ import annotations

import re
import unicodedata

from qmcredit.law.parameters import qualified_municipalities

#: USPS Publication 28 abbreviations (street suffixes, directionals, unit designators) of the
#: words an address commonly spells out; both spellings give the abbreviation.
ABBREVIATIONS = {
    "street": "st", "avenue": "ave", "av": "ave", "road": "rd", "boulevard": "blvd", "drive": "dr",
    "lane": "ln", "place": "pl", "court": "ct", "parkway": "pkwy", "highway": "hwy", "square": "sq",
    "terrace": "ter", "plaza": "plz", "circle": "cir", "turnpike": "tpke", "expressway": "expy",
    "north": "n", "south": "s", "east": "e", "west": "w",
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
    "suite": "ste", "apartment": "apt", "building": "bldg", "floor": "fl", "room": "rm",
}
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> str:
    """``text`` in NFKC, case-folded, its words (letters and digits) joined by single spaces and
    abbreviated as USPS Publication 28 does."""
    found = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return " ".join(ABBREVIATIONS.get(w, w) for w in found)


def municipality_key(municipality: str) -> str:
    """The municipality's name as E2's list gives it (aliases resolved), else its words."""
    given = words(municipality)
    for m in qualified_municipalities():
        if given in {words(name) for name in (m.name, *m.aliases)}:
            return words(m.name)
    return given


def place_key(municipality: str, address: str) -> str:
    """The key a location is known by: ``municipality|address``, both normalised."""
    return f"{municipality_key(municipality)}|{words(address)}"
