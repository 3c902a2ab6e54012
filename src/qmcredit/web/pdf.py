"""Form 313 and its worksheet as PDF, with reportlab (issues 5 and 16).

``form313_pdf`` lays one privilege period out line for line as the Division of Taxation's Form 313
of the period's year (``form.version_for``; figures from ``form``), with a rider for Part II when
more than five employees qualify and a preparer block; ``forms313_pdf`` puts several periods' forms
in one file (of a several-location claim, every location's, or one's, under the return's room, L6;
``forms_pdf`` any list of forms); ``worksheet_pdf`` is the attachment the form refers to: eligibility checks, the credit
years, the people excluded, the 36 months, averages and credits, the monthly chart, the ledger,
each period's line 16 credits and its chart.

All text is real text in an embedded TrueType font (Bitstream Vera, shipped with reportlab under
its licence, ``reportlab/fonts/bitstream-vera-license.txt``), each figure exactly as the
determination writes it, so ``pdftotext`` reads back the determination. Output is deterministic
(reportlab's ``invariant`` mode: fixed dates and document id), so the same claim gives the same
bytes. The open-source reportlab has no PDF/A output: ``pdfa.pdfa_2b`` adds what PDF/A-2b asks
of these files (XMP metadata, an sRGB OutputIntent; docs/form313.md says what is checked).
"""

from __future__ import annotations

from io import BytesIO
from xml.sax.saxutils import escape

from reportlab.graphics.shapes import Circle, Drawing, Group as RLGroup, Line as RLLine, Rect as RLRect, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import inch
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import CondPageBreak, Flowable, KeepTogether, PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from .figures import LEDGER_LABELS, PERIOD_LABELS, as_dict, ledger_table, monthly_table, select_period, shown
from .form import TAX_NAMES, Form313, Part, Preparer, excluded_people, layout_warnings, line16_credits, line16_letter, location_text, return_forms, room_shared, version_for
from .layout import Chart, Group, Line, Rect, Text, ledger_layout, monthly_layout
from .pdfa import pdfa_2b

FONT, FONT_BOLD = "QMCVera", "QMCVera-Bold"


def _register_fonts() -> None:
    """Bitstream Vera from reportlab's own font folder, embedded (subset) in every PDF."""
    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(FONT, "Vera.ttf"))
        pdfmetrics.registerFont(TTFont(FONT_BOLD, "VeraBd.ttf"))
        pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=FONT_BOLD, italic=FONT, boldItalic=FONT_BOLD)


_register_fonts()

BODY = ParagraphStyle("body", fontName=FONT, fontSize=8, leading=10)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=7, leading=8.6)
BOLD = ParagraphStyle("bold", parent=BODY, fontName=FONT_BOLD)
AMOUNT = ParagraphStyle("amount", parent=BODY, fontName=FONT_BOLD, alignment=TA_RIGHT)
TITLE = ParagraphStyle("title", parent=BODY, fontName=FONT_BOLD, fontSize=12.5, leading=15)
FRAME_WIDTH = letter[0] - 1.2 * inch
GRID = colors.HexColor("#808080")
SHADE = colors.HexColor("#e6e6e6")


class _Table(Table):
    """A table whose cells default to the embedded font (reportlab's default is Helvetica, not embedded)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.setStyle(TableStyle([("FONTNAME", (0, 0), (-1, -1), FONT)]))


def _p(text: str, style: ParagraphStyle = BODY) -> Paragraph:
    return Paragraph(escape(text), style)


class _Doc(SimpleDocTemplate):
    """A letter page with a footer naming the form on it and its page within that form."""

    footer = ""
    first_page = 1

    def afterPage(self):
        c = self.canv
        c.saveState()
        c.setFont(FONT, 7)
        c.drawString(0.6 * inch, 0.35 * inch, self.footer)
        c.drawRightString(letter[0] - 0.6 * inch, 0.35 * inch, f"Page {self.page - self.first_page + 1}")
        c.restoreState()


class _Footer(Flowable):
    """Sets the footer from here on (a new form in a file of several starts its pages at 1)."""

    def __init__(self, doc: _Doc, text: str):
        super().__init__()
        self.doc, self.text = doc, text
        self.width = self.height = 0

    def wrap(self, aw, ah):
        return 0, 0

    def draw(self):
        self.doc.footer, self.doc.first_page = self.text, self.doc.page


def _doc(buf: BytesIO, title: str, subject: str) -> _Doc:
    return _Doc(buf, pagesize=letter, leftMargin=0.6 * inch, rightMargin=0.6 * inch, topMargin=0.5 * inch,
                bottomMargin=0.6 * inch, title=title, subject=subject, author="qmcredit", creator="qmcredit", invariant=1,
                initialFontName=FONT, initialFontSize=8)


def _grid(rows, widths, header: bool = True, font_size: float = 7, amounts_from: int | None = None) -> Table:
    """A ruled table; the first row is the header when ``header``; the body's columns from
    ``amounts_from`` on are amounts, set flush right."""
    style_ = ParagraphStyle("cell", parent=SMALL, fontSize=font_size, leading=font_size + 1.6)
    right = ParagraphStyle("cellr", parent=style_, alignment=TA_RIGHT)
    cells = [[c if isinstance(c, (Paragraph, Flowable)) else
              _p(str(c), right if amounts_from is not None and r and k >= amounts_from else style_)
              for k, c in enumerate(row)] for r, row in enumerate(rows)]
    t = _Table(cells, colWidths=widths, repeatRows=1 if header else 0)
    style = [("GRID", (0, 0), (-1, -1), 0.4, GRID), ("VALIGN", (0, 0), (-1, -1), "TOP"),
             ("TOPPADDING", (0, 0), (-1, -1), 1.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5)]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), SHADE))
    t.setStyle(TableStyle(style))
    return t


def _part_heading(part: Part) -> Table:
    t = _Table([[_p(f"Part {part.number}", ParagraphStyle("ph", parent=BOLD, textColor=colors.white)),
                _p(part.title, ParagraphStyle("pt", parent=BOLD, fontSize=9, textColor=colors.white))]],
              colWidths=[0.7 * inch, FRAME_WIDTH - 0.7 * inch])
    t.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                           ("TOPPADDING", (0, 0), (-1, -1), 1.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5)]))
    t.keepWithNext = True
    return t


def _form_lines(part: Part, lines=None) -> Table:
    """The numbered lines of a part: number, text, number again and the boxed amount, as on the form
    (Part I's answers, an address and a date, have a wider box)."""
    lines = part.lines if lines is None else lines
    rows = []
    for ln in lines:
        sub = ln.no.endswith(")")
        no = ln.no if sub else (f"{ln.no}." if ln.no else "")
        rows.append([_p("" if sub else no, BOLD), _p(f"{no} {ln.text}" if sub else ln.text), _p(ln.no, SMALL), _p(ln.value, AMOUNT)])
    value_w = (2.4 if part.number == "I" else 1.7) * inch
    t = _Table(rows, colWidths=[0.4 * inch, FRAME_WIDTH - 0.75 * inch - value_w, 0.35 * inch, value_w])
    t.setStyle(TableStyle([("BOX", (3, 0), (3, -1), 0.8, colors.black), ("INNERGRID", (3, 0), (3, -1), 0.5, colors.black),
                           ("LINEBELOW", (1, 0), (1, -1), 0.3, GRID), ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                           ("LEFTPADDING", (1, 0), (1, -1), 2), ("TOPPADDING", (0, 0), (-1, -1), 1.6), ("BOTTOMPADDING", (0, 0), (-1, -1), 1.6)]))
    return t


def _oval(filled: bool) -> Drawing:
    d = Drawing(12, 9, initialFontName=FONT)
    d.add(Circle(6, 4.5, 4, strokeColor=colors.black, strokeWidth=0.8, fillColor=colors.black if filled else None))
    return d


def _form_header(f: Form313) -> list:
    v = f.version
    head = _Table([[
        [_p("FORM 313", ParagraphStyle("f", parent=TITLE, fontSize=15, leading=18)), _p(str(v["form_year"]), BOLD)],
        [_p(f"New Jersey {TAX_NAMES.get(f.tax, f.tax)}", BOLD), _p("Economic Recovery Tax Credit", TITLE)],
        [_p("Tax period", SMALL), _p(f.period, BOLD)],
    ]], colWidths=[1.45 * inch, FRAME_WIDTH - 3.35 * inch, 1.9 * inch])
    head.setStyle(TableStyle([("LINEBELOW", (0, 0), (-1, 0), 1.2, colors.black), ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                              ("BOTTOMPADDING", (0, 0), (-1, -1), 3)]))
    labels = ["Name as Shown on Return", "Federal ID Number"] + (["Unitary ID Number, if applicable"] if v["unitary_id"] else [])
    values = [f.taxpayer_name or "(no name given)", f.taxpayer_id] + ([f.unitary_id] if v["unitary_id"] else [])
    widths = [FRAME_WIDTH - 3.6 * inch, 1.6 * inch, 2.0 * inch] if v["unitary_id"] else [FRAME_WIDTH - 2.0 * inch, 2.0 * inch]
    ident = _Table([[_p(x, SMALL) for x in labels], [_p(x, BOLD) for x in values]], colWidths=widths)
    ident.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 0.6, colors.black), ("INNERGRID", (0, 0), (-1, -1), 0.3, GRID),
                               ("TOPPADDING", (0, 0), (-1, -1), 1), ("BOTTOMPADDING", (0, 0), (-1, -1), 2)]))
    out = [head, Spacer(1, 3), ident]
    if v["combined_return_oval"]:
        oval = _Table([[_p("Combined Return Filers", BOLD), _oval(f.combined_group_member),
                       _p("The taxpayer is included as a taxable member on a New Jersey combined return. "
                          "Fill in oval if member is not sharing its credit with other members of the group.", SMALL)]],
                     colWidths=[1.6 * inch, 0.25 * inch, FRAME_WIDTH - 1.85 * inch])
        oval.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "MIDDLE"), ("TOPPADDING", (0, 0), (-1, -1), 1), ("BOTTOMPADDING", (0, 0), (-1, -1), 1)]))
        out += [Spacer(1, 2), oval]
    share = (f" This is the form of the taxpayer's location {f.location_id}, one of {f.locations} on this return: the credit is applied under "
             "one room per return (L6), and line 16 lists what the other locations take of it." if f.location_id else "")
    laid = (f"Laid out as {v['printed']}: the Division's layout for form year {v['form_year']} is not recorded (see the worksheet). "
            if v["warning"] else f"Laid out as {v['printed']}, the version for form year {v['form_year']}. ")
    out += [Spacer(1, 2), _p(laid +
                             "Figures from the qmcredit determination of the claim; the attached worksheet shows the work behind every line." + share, SMALL)]
    return out


def _part_flowables(part: Part) -> list:
    out = [Spacer(1, 5), _part_heading(part), Spacer(1, 2)]
    if part.lines:
        out.append(_form_lines(part))
    if part.table:
        n = len(part.table[0])
        if part.number == "II":
            widths = [0.35 * inch, 1.45 * inch, FRAME_WIDTH - 4.2 * inch, 1.2 * inch, 1.2 * inch]
        else:
            first = 2.0 * inch
            widths = [first] + [(FRAME_WIDTH - first) / (n - 1)] * (n - 1)
        out += [Spacer(1, 2), _grid(part.table, widths, font_size=7.5, amounts_from=1 if part.number == "V" else None)]
    if part.after:
        out += [Spacer(1, 2), _form_lines(part, part.after)]
    if part.note:
        out += [Spacer(1, 2), _p(part.note, SMALL)]
    return out


def _preparer_block(p: Preparer) -> Table:
    blank = "_" * 30
    rows = [[_p("Preparer's name", SMALL), _p("Firm", SMALL), _p("PTIN", SMALL)],
            [_p(p.name or blank, BOLD), _p(p.firm or blank, BOLD), _p(p.ptin or "_" * 14, BOLD)],
            [_p("Signature of preparer", SMALL), _p("Date", SMALL), _p("", SMALL)],
            [_p(blank + "_" * 10, BODY), _p("_" * 20, BODY), _p("", BODY)]]
    t = _Table(rows, colWidths=[FRAME_WIDTH - 3.6 * inch, 2.1 * inch, 1.5 * inch])
    t.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 0.6, colors.black), ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                           ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5)]))
    return t


def _form_story(doc: _Doc, f: Form313) -> list:
    where = f" - location {f.location_id}" if f.location_id else ""
    story = [_Footer(doc, f"Form 313 ({f.version['id']} layout) - {f.taxpayer_name} ({f.taxpayer_id}){where} - tax period {f.period}"),
             *_form_header(f)]
    for part in f.parts:
        story += _part_flowables(part)
    story += [Spacer(1, 8), KeepTogether([_p("Preparer", BOLD), Spacer(1, 2), _preparer_block(f.preparer)])]
    if f.rider:
        story += [PageBreak(), _p("Rider to Form 313, Part II: additional qualifying employees", TITLE),
                  _p(f"{f.taxpayer_name} ({f.taxpayer_id})" + (f", location {f.location_id}" if f.location_id else "") + f", tax period {f.period}", BODY),
                  Spacer(1, 6),
                  _grid(f.rider, [0.35 * inch, 1.45 * inch, FRAME_WIDTH - 4.2 * inch, 1.2 * inch, 1.2 * inch], font_size=7.5)]
    return story


def forms_pdf(forms: list[Form313]) -> bytes:
    """The forms in one PDF, each starting on a new page with its own page numbers."""
    buf = BytesIO()
    name = forms[0].taxpayer_name if forms else ""
    places = {f.location_id for f in forms} - {""}
    what = forms[0].period if len(forms) == 1 else f"{len({f.period for f in forms})} tax periods" + (f", {len(places)} locations" if places else "")
    doc = _doc(buf, f"Form 313, {name}, {what}", "Economic Recovery Tax Credit")
    story: list = []
    for k, f in enumerate(forms):
        if k:
            story.append(PageBreak())
        story += _form_story(doc, f)
    doc.build(story)
    return pdfa_2b(buf.getvalue())


def forms313_pdf(claim, det, periods: list[int | str] | None = None, preparer: Preparer = Preparer(), location: str | None = None) -> bytes:
    """Form 313 for several privilege periods in one PDF, each starting on a new page (all of them
    when ``periods`` is None); each period chosen as in ``form313_pdf``. A claim with several
    locations gives every location's forms under the return's room (L6), or ``location``'s."""
    indices = None if periods is None else [select_period(det, p) for p in periods]
    return forms_pdf(return_forms(claim, det, indices, preparer, location))


def form313_pdf(claim, det, period: int | str, preparer: Preparer = Preparer(), location: str | None = None) -> bytes:
    """Form 313 for one privilege period of ``det`` (a ``Determination``), chosen by index into its
    periods or by the year (``YYYY``) in which the period ends; raises ``PeriodNotFound`` naming the periods."""
    return forms313_pdf(claim, det, [period], preparer, location)


def _check_widths(n: int) -> list[float]:
    """The table of eligibility checks: rule, cite, condition, result, why."""
    fixed = [0.4 * inch, 1.1 * inch, 2.4 * inch, 0.6 * inch]
    return fixed[:n - 1] + [FRAME_WIDTH - sum(fixed[:n - 1])] if n == 5 else [FRAME_WIDTH / n] * n


def chart_drawing(chart: Chart, width: float = FRAME_WIDTH) -> Drawing:
    """A chart of ``layout`` drawn with reportlab graphics, scaled to ``width`` points."""
    s = width / chart.width
    g = RLGroup()

    def add(shape):
        if isinstance(shape, Group):
            for c in shape.children:
                add(c)
        elif isinstance(shape, Rect):
            dash = [float(x) for x in shape.dash.split()] if shape.dash else None
            g.add(RLRect(shape.x, chart.height - shape.y - shape.h, shape.w, max(shape.h, 0),
                         fillColor=colors.HexColor(shape.fill) if shape.fill else None,
                         strokeColor=colors.HexColor(shape.stroke) if shape.stroke else None,
                         strokeWidth=0.8 if shape.stroke else 0, strokeDashArray=dash))
        elif isinstance(shape, Line):
            dash = [float(x) for x in shape.dash.split()] if shape.dash else None
            g.add(RLLine(shape.x1, chart.height - shape.y1, shape.x2, chart.height - shape.y2,
                         strokeColor=colors.HexColor(shape.stroke), strokeWidth=shape.width, strokeDashArray=dash))
        elif isinstance(shape, Text):
            g.add(String(shape.x, chart.height - shape.y, shape.text, fontSize=shape.size,
                         fontName=FONT_BOLD if shape.bold else FONT,
                         textAnchor=shape.anchor, fillColor=colors.HexColor(shape.fill)))

    for shape in chart.shapes:
        add(shape)
    g.scale(s, s)
    drawing = Drawing(width, chart.height * s, initialFontName=FONT)
    drawing.add(g)
    return drawing


def _heading(text: str) -> list:
    return [Spacer(1, 10), _p(text, ParagraphStyle("h", parent=BOLD, fontSize=10.5, leading=13)), Spacer(1, 3)]


def _credits_rows(claim, det) -> list[tuple]:
    """Each period's other credits: name, Director's list number, the letter of line 16 it is on
    (the period's form version), amount, and whether it is counted before this credit (L2, L2a)."""
    rows = []
    for i, (start, end) in enumerate(det.ledger.dates):
        version = version_for(end)
        for name, code, amount, before in line16_credits(claim, i):
            letter = line16_letter(version, name, code) if before else None
            on = (f"line 16{letter})" if letter else "line 16, not named on the form") if before else \
                "not on line 16: applied after this credit, does not reduce its room (L2a)"
            rows.append((f"{start} to {end}", name, "" if code is None else str(code), amount, on))
    return rows


def worksheet_pdf(claim, det) -> bytes:
    """The worksheet to attach to the return: eligibility checks (E1-E5), the credit years and any
    earlier credit period (E4, W1-W3), the people excluded (P1-P3), the 36 months (P2-P5) with the
    chart, averages, new positions and credits (C1-C3), the ledger of every privilege period (L1-L5,
    R1) with the Part IV lines, the line 16 credits (L2a), the carryover by credit year and its chart.
    A claim with several locations: first how the return's room was shared (L6), then each
    location's worksheet."""
    tp = claim.taxpayer
    buf = BytesIO()
    doc = _doc(buf, f"Form 313 worksheet, {tp.name}", "Economic Recovery Tax Credit worksheet")
    doc.footer = f"Form 313 worksheet - {tp.name} ({tp.id})"
    if not claim.parts:
        story = _worksheet_story(claim, det)
    else:
        story = _sharing_story(claim, det)
        for part, loc in zip(claim.parts, det.locations):
            story += [PageBreak(), _Footer(doc, f"Form 313 worksheet - {tp.name} ({tp.id}) - location {part.location_id}"),
                      *_worksheet_story(part, loc, det)]
    doc.build(story)
    return pdfa_2b(buf.getvalue())


def _sharing_story(claim, det) -> list:
    """The return's page: each period's one room and, year of origin by year of origin, every
    location's balance, its share and what it was applied (L6, L4; option ``location_order``)."""
    order = claim.options.location_order
    how = ("within a year of origin, each location's balance in full, in the order the locations are listed, until the room is used "
           "(location_order = \"as_listed\")" if order == "as_listed" else
           "within a year of origin, in proportion to the locations' balances, cents by largest remainder, ties to the location listed first "
           "(location_order = \"proportional\", the default)")
    sites = [(p.location_id, location_text(p.header.location.address, p.header.location.municipality)) for p in claim.parts]
    story = [
        _p("Worksheet for Form 313: Economic Recovery Tax Credit - one return, several locations", TITLE),
        _p(f"{claim.taxpayer.name} ({claim.taxpayer.id}). Attached to each location's Form 313. N.J.S.A. 52:27BBB-55(b)(3); "
           "figures from the qmcredit determination of the claim.", SMALL), Spacer(1, 6),
        _grid([("Location", "Address"), *sites], [1.4 * inch, FRAME_WIDTH - 1.4 * inch], font_size=7.5),
        Spacer(1, 4),
        _p("The 50% limit and the minimum-tax floor are on the credit applied for a privilege period: one room per return, whatever "
           f"the number of locations (rule L6). The room goes to the older year of origin first (L4: year one, then year two); {how}. "
           "Each location's Form 313 lists on line 16 what the other locations take, so that its line 17 is what the room leaves it "
           "and its line 18 is its share.", BODY),
        *_heading("How the room of each period was shared (rule L6)"),
    ]
    rows = [("Period", "Room of the return (L2, L6)", "Year of origin", "Room left for it", "Location", "Balance (opening + allowed)",
             "Share of the year's balances", "Applied (line 18)")]
    for s in room_shared(det):
        first = True
        for origin, left, _total, held in s.origins:
            for k, (loc, balance, share, applied) in enumerate(held):
                rows.append((s.period if first else "", s.room if first else "", PERIOD_LABELS[origin] if not k else "",
                             left if not k else "", loc, balance, share, applied))
                first = False
        rows.append((s.period if first else "", s.room if first else "", "Applied on the return", "", "", "", "", s.applied))
    story.append(_grid(rows, [1.35 * inch, 0.85 * inch, 0.95 * inch, 0.8 * inch, 0.9 * inch, 0.9 * inch, 0.7 * inch,
                              FRAME_WIDTH - 6.45 * inch], font_size=7, amounts_from=5))
    d = as_dict(det)
    story += [Spacer(1, 4), _p(f"Refund of the return (R1a, each location's own year-one balance times its own sustained effort ratio): "
                               f"{shown(d.get('refund'))}. Carried forward after the last period: {shown(d.get('carried_forward'))}.", BODY)]
    notes = [*d.get("warnings", []), *layout_warnings(end for _, end in det.ledger.dates)]
    if notes:
        story += [*_heading("Notes"), *(_p(f"- {n}") for n in notes)]
    return story


def _worksheet_story(claim, det, of=None) -> list:
    """One location's worksheet (``of``: the several-location return it is a location of)."""
    d = as_dict(det)
    tp, loc = claim.taxpayer, claim.header.location
    w = d["windows"]
    excluded = excluded_people(claim, d)
    credits = _credits_rows(claim, det)
    story = [
        _p("Worksheet for Form 313: Economic Recovery Tax Credit" + (f" - location {claim.location_id}" if of is not None else ""), TITLE),
        _p("Attached to Form 313. N.J.S.A. 52:27BBB-55; figures from the qmcredit determination of the claim.", SMALL), Spacer(1, 6),
        _grid([["Taxpayer", f"{tp.name} ({tp.id})"], ["Tax", TAX_NAMES.get(tp.tax, tp.tax)],
               ["Location", location_text(loc.address, loc.municipality)],
               ["Operations began", loc.operations_began.isoformat() + (f" ({loc.operations_source})" if loc.operations_source else "")],
               ["Credit year one (W1)", f"{w['year_one']['start']} to {w['year_one']['end']}"],
               ["Credit year two (W2)", f"{w['year_two']['start']} to {w['year_two']['end']}"],
               ["Base period (W3)", f"{w['base']['start']} to {w['base']['end']}"],
               ["Earlier 24-month credit period (E4, 52:27BBB-55(d))", tp.earlier_credit_period_start or "None"],
               ["Eligible", "yes" if d["eligible"] else "NO"]],
              [2.2 * inch, FRAME_WIDTH - 2.2 * inch], header=False, font_size=7.5),
        *_heading("Eligibility (rules E1-E5)"),
        _grid([("Rule", "Cite", "Condition", "Result", "Why"),
               *((c["rule"], c["cite"], c["condition"], "passed" if c["passed"] else "FAILED", c["message"]) for c in d.get("checks", []))],
              _check_widths(5)),
        *_heading("People excluded or counted part-time only (Form 313 Part I questions 3 and 4; rules P1-P4)"),
        _grid([("Name", "Social security number", "Rule", "Why"), *excluded], [1.6 * inch, 1.3 * inch, 0.6 * inch, FRAME_WIDTH - 3.5 * inch])
        if excluded else _p("No one was excluded: every employee with hours in the credit years is an employee of the taxpayer "
                            "(P1) and no temporary or seasonal worker was counted (P2).", BODY),
        *_heading("Measured periods (rules W1-W3) and credits (C1-C3)"),
        _grid([("Period", "From", "To", "Average positions", "New full-time positions", "Credit"),
               *((PERIOD_LABELS[k], w[k]["start"], w[k]["end"], shown(d["average_positions"][k]),
                  "" if k == "base" else shown(d["new_positions"][k]), "" if k == "base" else shown(d["credit"][k]))
                 for k in ("base", "year_one", "year_two"))],
              [1.3 * inch] + [(FRAME_WIDTH - 1.3 * inch) / 5] * 5),
        Spacer(1, 3),
        _p(f"Sustained effort ratio (C3): {shown(d['sustained_effort_ratio'])}. Refund (R1): {shown(d.get('refund'))}. "
           f"Carried forward after the last period: {shown(d.get('carried_forward'))}.", BODY),
        *_heading("Positions month by month (rules P2-P5; equivalents = part-time hours / 140)"),
        _grid([("Month", "Period", "Full-time positions", "Part-time hours", "Full-time equivalents", "Positions"),
               *((r["month"], r["period_label"], r["full_time"], r["equivalent_hours"], r["equivalents"], r["positions"])
                 for r in monthly_table(d))],
              [0.9 * inch, 1.4 * inch] + [(FRAME_WIDTH - 2.3 * inch) / 4] * 4),
        CondPageBreak(4.2 * inch),
        *_heading("The monthly chart"),
        chart_drawing(monthly_layout(d)),
        *_heading("Ledger by privilege period (rules L1-L5, R1)"),
        _grid([("Period", *(LEDGER_LABELS[k] for k in ("allowed", "room", "applied", "refund", "forfeited", "carried_forward"))),
               *((r["period"], r["allowed"], r["room"], r["applied"], r["refund"], r["forfeited"], r["carried_forward"]) for r in ledger_table(d))],
              [1.5 * inch] + [(FRAME_WIDTH - 1.5 * inch) / 6] * 6),
        *_heading("Room of each period (Form 313 Part IV, rules L2-L3)" + ("; the return's, shared among its locations (L6)" if of is not None else "")),
        _grid([("Period", "Liability", "50% of liability", "Floor", "Above floor", "Other credits before", "Room"),
               *((f"{p['start']} to {p['end']}", *(shown(p.get('detail', {}).get(k), "n/a") for k in
                  ("liability", "cap_50_percent", "floor", "liability_above_floor", "other_credits_before")), p["room"])
                 for p in d["periods"])],
              [1.5 * inch] + [(FRAME_WIDTH - 1.5 * inch) / 6] * 6),
        *_heading("Other credits on each return (Form 313 Part IV line 16, rules L2, L2a)"),
        _grid([("Period", "Credit", "List no.", "Amount", "On Form 313"), *credits],
              [1.5 * inch, 2.0 * inch, 0.55 * inch, 0.9 * inch, FRAME_WIDTH - 4.95 * inch])
        if credits else _p("No other credit is taken on any of these returns.", BODY),
        *_heading("Carryover by credit year (Form 313 Part V, rules L4-L5, R1)"),
        _grid([("Period", "Credit year", "Opening", "Allowed", "Applied", "Refund", "Forfeited", "Closing"),
               *((f"{p['start']} to {p['end']}", PERIOD_LABELS[o], v["opening"], v["allowed"], v["applied"], v["refund"], v["forfeited"], v["closing"])
                 for p in d["periods"] for o, v in p.get("detail", {}).get("origins", {}).items())],
              [1.5 * inch, 1.1 * inch] + [(FRAME_WIDTH - 2.6 * inch) / 6] * 6),
        KeepTogether([*_heading("The ledger chart"), chart_drawing(ledger_layout(d))]),
    ]
    layouts = layout_warnings(end for _, end in det.ledger.dates) if of is None else []
    notes = [*d.get("warnings", []), *layouts, *(f"{PERIOD_LABELS[o]} credit {v['amount']} is allowed for the period containing "
                                       f"{v['allowed_for_period_containing']}, which the claim does not give: not yet applied"
                                       for o, v in (d.get("not_yet_applied") or {}).items())]
    if (d.get("pending") or {}).get("as_of"):
        notes.append(f"Payroll known up to {d['pending']['as_of']}: figures shown as pending are not decided yet.")
    notes += [f"The period containing {m['containing']} (credit year one's last day) is not given: figures shown as pending are not decided (V2)."
              for m in (d.get("pending") or {}).get("missing_periods", [])]
    if notes:
        story += [*_heading("Notes"), *(_p(f"- {n}") for n in notes)]
    return story
