"""For analysts: what the credit costs the State and what a change to it would cost (issue 17).

``cost`` reads a batch's outputs into each claim's cost figures and the cost tables; ``reform``
decides the same claims under the baseline and under reforms (``law.parameter_set``) in one run;
``outputs`` and ``report`` write the tables as Parquet, CSV, an Excel workbook and an HTML page.
"""
