"""The statute as code: N.J.S.A. 52:27BBB-55, one module per part, pure functions, no I/O.

- eligibility  E1-E5   subsections a. and d.
- windows      W1-W3   subsection e. (credit years, base period)
- positions    P1-P5   subsection e. (who counts, month by month; columnar)
- credit       C1-C3   subsections a. and e. (new positions, amounts, sustained effort ratio)
- limits       L2-L3   subsection b.(3) and N.J.S.A. 54:10A-5(e) (room, floor, minimum tax)
- order        L2a     subsection b.(3) with N.J.A.C. 18:7-3.17 (other credits in the Director's order)
- ledger       L1, L4-L6, R1-R3   subsections b. and c. (allowance, one room per return, carryforward, refund)
- rule         each step's rule id, citation and reading, read by the trace
- options      the readings RULES.md lets a claim choose
- parameters   dated, cited values (amounts, thresholds, schedules) read from parameters/*.toml
"""
