"""What the pages embed and the returns attach (issue 5): the monthly and ledger charts as inline
SVG (``charts``), Form 313 and the worksheet as PDF (``pdf``), and the ``form313`` command (``cli``).

Everything here reads a determination (``qmcredit.decide(claim).to_dict(explain=True)``) and shows
its figures as the engine wrote them; nothing here decides anything.
"""
