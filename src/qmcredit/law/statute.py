"""The statute's own words behind each rule id of RULES.md (N.J.S.A. 52:27BBB-55, as amended by
P.L.2003, c.194), so that every figure can be shown beside the sentence it reads (rule B1)."""

from __future__ import annotations

_A = (
    "A taxpayer engaged in the conduct of business within a qualified municipality and who is not receiving a benefit "
    "under the \u201cNew Jersey Urban Enterprise Zones Act,\u201d ... may apply to receive a tax credit against the amount of tax "
    "otherwise imposed under the \u201cCorporation Business Tax Act (1945),\u201d ... or the tax imposed on insurers ..."
)
_AMOUNTS = "equal to: $2,500 for each new full-time position at that location in credit year one and $1,250 for each new full-time position at that location in credit year two."
_YEAR_ONE = "\u201cCredit year one\u201d means the first twelve calendar months following initial or expanded operations at a location within a qualified municipality ..."
_NEW = (
    "New full time positions shall be measured by the increase, from the twelve-month period preceding credit year one to the "
    "measured credit year, in the average number of full-time positions and full-time position equivalents employed by the "
    "taxpayer at the location ..."
)
_LIMIT = (
    "The amount of the credit applied under this section against the tax imposed pursuant to section 5 of P.L.1945, c.162 "
    "(C. 54:10A-5) for a privilege period, together with any other credits allowed by law, shall not exceed 50% of the tax "
    "liability otherwise due and shall not reduce the tax liability to an amount less than the statutory minimum provided in "
    "subsection (e) of section 5 of P.L.1945, c.162."
)
_CARRY = (
    "An unused credit may be carried forward, if necessary, for use in the privilege periods or reporting periods following "
    "the privilege period or reporting period for which the credit is allowed."
)
_REFUND = (
    "That amount of the credit received for credit year one remaining, if any, after the liabilities for the privilege period "
    "or reporting period in which or with which credit year two ends and for any prior period have been satisfied, multiplied "
    "by the sustained effort ratio, shall be an overpayment for the purposes of section R.S.54:49-15 for the period in which or "
    "with which credit year two ends; that amount of the credit received for credit year one remaining, if any, that is not an "
    "overpayment pursuant to this paragraph may be carried forward pursuant to subsection b. of this section."
)

WORDS: dict[str, tuple[str, str]] = {
    "E1": ("(a)", _A),
    "E2": ("(a)", _A),
    "E3": ("(a)", _A),
    "E4": ("(d)", "No taxpayer shall be allowed more than a single 24-month continuous period in which credits shall be allowed for activity at a location within a qualified municipality ..."),
    "E5": ("(a), (d)", _A),
    "W1": ("(e)", _YEAR_ONE),
    "W2": ("(e)", "\u201cCredit year two\u201d means the twelve calendar months following credit year one."),
    "W3": ("(e)", _NEW),
    "P1": ("(e)", "\u201cEmployee of the taxpayer\u201d does not include an individual with an ownership interest in the business, that individual\u2019s spouse or dependants, or that individual\u2019s ancestors or descendants."),
    "P2": ("(e)", "\u201cFull time position\u201d means a position filled by an employee of the taxpayer for at least 140 hours per month on a permanent basis, which does not include employment that is temporary or seasonal."),
    "P3": ("(e)", "\u201cPart-time position\u201d means a position filled by an employee of the taxpayer for at least 20 hours per week for at least three months during the credit year."),
    "P4": ("(e)", "The hours of employees filling part-time positions shall be aggregated to determine the number of full-time position equivalents."),
    "P5": ("(e)", _NEW),
    "C1": ("(e)", _NEW),
    "C2": ("(a)", _AMOUNTS),
    "C3": ("(e)", "\u201cSustained effort ratio\u201d means the proportion that the credit year two new full-time positions bears to the credit year one new full-time positions, not to exceed one."),
    "L1": ("(b)(1)", "The credit ... for credit year one shall be allowed for the privilege period or reporting period in which or with which credit year one ends; the credit ... for credit year two shall be allowed for the privilege period or reporting period in which or with which credit year two ends."),
    "L2": ("(b)(3)", _LIMIT),
    "L3": ("(b)(3)", _LIMIT),
    "L4": ("(b)(2)", _CARRY),
    "L5": ("(b)(2)", _CARRY),
    "R1": ("(c)(2)", _REFUND),
    "R2": ("(c)(2)", _REFUND),
    "R3": ("(c)(1)", "Notwithstanding the provisions of subsection b. of this section to the contrary, the credit allowed for credit year one may be refundable at the close of the privilege period or reporting period in which or with which credit year two ends ..."),
    "B1": ("(d)", "The burden of proof shall be on the taxpayer to establish by clear and convincing evidence that the taxpayer is entitled to the credits or refund allowed pursuant to this section."),
    "B2": ("(d)", "The director shall by regulation establish criteria for the determination of when new or expanded operations have begun at a location."),
}


def words(rule: str) -> list[tuple[str, str, str]]:
    """(rule, subsection, words) for a rule id, or for each id of a range such as "W1-W3"."""
    if "-" in rule:
        first, last = rule.split("-", 1)
        ids = [f"{first[0]}{n}" for n in range(int(first[1:]), int(last[1:]) + 1)]
    else:
        ids = [rule]
    return [(r, *WORDS[r]) for r in ids if r in WORDS]
