#!/usr/bin/env python3
"""Regenerates issue 24's quality tables from the results files kept in the repository
(`experiments/quality/results/`) and checks them against the numbers benches/README quotes
(every committed cell of the CART table and of the S-ORCT paper's rows, listed rows of
the others): a results file that is lost, truncated or rewritten, or a reading command that
changes what it computes, fails here. Seconds are not checked (they are the machine's).

Run by scripts/test.sh with the Python package's interpreter (table4.py needs numpy):
    python3 experiments/quality/check_results.py
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def output(script, *args):
    """What `script args` prints (`script` relative to this folder); a failing exit is a
    failed check."""
    done = subprocess.run([sys.executable, os.path.join(HERE, script), *args],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("check_results.py: %s %s failed:\n%s" % (script, " ".join(args), done.stderr))
    return done.stdout


def table_cells(text):
    """The lines of the markdown tables in `text` as lists of cells, header first, without
    the |---| lines."""
    return [[c.strip() for c in l.strip().strip("|").split("|")]
            for l in text.splitlines() if l.startswith("|") and not l.startswith("|---")]


def markdown_rows(text):
    """A markdown table's rows as dicts by header, keyed by their first two cells."""
    cells = table_cells(text)
    if not cells:
        return {}
    head = cells[0]
    return {(row[0], row[1]): dict(zip(head, row)) for row in cells[1:]}


def check(name, rows, expected):
    """Each expected row's listed columns as printed; returns the mismatches, described."""
    wrong = []
    for key, columns in expected.items():
        row = rows.get(key)
        if row is None:
            wrong.append("%s: no row %s" % (name, key))
            continue
        for column, value in columns.items():
            if row.get(column) != value:
                wrong.append("%s %s %r: %r, expected %r"
                             % (name, key, column, row.get(column), value))
    return wrong


def readme_table(marker):
    """The rows of the benches/README table that follows the line `marker`, keyed by their
    first two cells (data set, D), each as its list of cells."""
    text = open(os.path.join(HERE, "..", "..", "benches", "README.md")).read()
    start = text.index(marker)
    table = text[start:text.index("\n\n", text.index("\n|", start) + 1)]
    return {(r[0], r[1]): r for r in table_cells(table)[1:]}


# Committed CART-table cells (data set, D); a lost results folder fails the count.
CART_CELLS = 78


def cart_table():
    """Every committed cell against the README's whole table: CART's and S-ORCT's accuracy,
    the difference +- SE, iterations a split, CART kept and gamma (all but the seconds)."""
    # (`polished@1` where a cell ran as `polished` only, as the README's table: sonar D=4)
    text = output("cart_table.py", "table", "--out", os.path.join(RESULTS, "cart_table"),
                  "--variants", "cart,default/polished@1")
    # (a cell whose CART variant alone is archived prints "not run" for S-ORCT)
    regenerated = {(r[0], r[1]): r for r in table_cells(text)[1:] if r[3] != "not run"}
    quoted = readme_table("**The whole table with the default**")
    wrong = []
    if len(regenerated) != CART_CELLS:
        wrong.append("cart_table: %d cells regenerated, %d committed"
                     % (len(regenerated), CART_CELLS))
    # both tables: data set, D, CART, S-ORCT, difference, s/split, iterations, kept, gamma, splits
    compared = (2, 3, 4, 6, 7, 8, 9)
    for key, row in sorted(regenerated.items()):
        if key not in quoted:
            wrong.append("cart_table: %s not in benches/README's table" % (key,))
        elif [row[i] for i in compared] != [quoted[key][i] for i in compared]:
            wrong.append("cart_table %s: %s, benches/README %s"
                         % (key, [row[i] for i in compared], [quoted[key][i] for i in compared]))
    return wrong


def paper_rows_as_quoted(name, folder, variants, marker, rows):
    """`cart_table.py paper_rows` on the results folder `folder` with `variants`: `rows`
    rows, each with every variant run, every cell as the benches/README table after the
    line `marker` quotes it."""
    text = output("cart_table.py", "paper_rows", "--out", os.path.join(RESULTS, folder),
                  "--variants", variants)
    regenerated = {(r[0], r[1]): r for r in table_cells(text)[1:]}
    quoted = readme_table(marker)
    wrong = []
    if len(regenerated) != rows or "not run" in text:
        wrong.append("%s: %d rows regenerated, %d with every variant committed"
                     % (name, len(regenerated), rows))
    for key, row in sorted(regenerated.items()):
        if quoted.get(key) != row:
            wrong.append("%s %s: %s, benches/README %s" % (name, key, row, quoted.get(key)))
    return wrong


def paper_rows():
    """The S-ORCT paper's 13 lambda = 0 rows that we hold (Tables 3-4) at the defaults,
    without the choice, with the paper's rho and at the paper's setting; the four the
    defaults miss over 30 splits; german credit D=1 with 100 starts."""
    return paper_rows_as_quoted("paper_rows", "cart_table",
                                "default/polished@1,objective,rho3m,paper",
                                "**The paper's rows from the results files**", 13) + \
        paper_rows_as_quoted("paper_rows30", "paper_rows30", "default,objective,paper",
                             "**The paper's rows below, over 30 splits**", 4) + \
        paper_rows_as_quoted("paper_rows30_starts100", "paper_rows30_starts100",
                             "objective,paper", "**German credit D=1 with 100 starts, over 30 "
                             "splits**", 1)


def paper_setting():
    """The paper's setting against the defaults on the 36 cells of depths 1 and 2
    (benches/README "The defaults against the paper's setting on every cell of depths 1
    and 2"): cells, cells below CART - 0.5 and the mean over CART, as quoted."""
    rows = markdown_rows(output("cart_table.py", "summary", "--out",
                                os.path.join(RESULTS, "cart_table"), "--depths", "1,2",
                                "--variants", "cart,paper,default/polished@1"))
    below = "7: pima D=2, haberman D=2, wholesale D=1, wholesale D=2, spectf D=2, monks3 D=2, " \
            "thyroid D=2"
    # (summary's rows are keyed by variant and cells: its first two columns)
    return check("paper_setting", rows, {
        ("paper", "36"): {"below CART - 0.5": below, "mean - CART (pp)": "+8.33"},
        ("default/polished@1", "36"): {"below CART - 0.5": "0:", "mean - CART (pp)": "+8.25",
                                       "sum - paper (pp)": "-3.0"},
    })


def choice_margins():
    """The choice decided again offline at five margins on the default's cells (benches/README
    "The choice's margin, the current default's cells"): cells below CART - 0.5 and the mean
    over CART at each, as quoted."""
    margins = "-1,-0.5,0,0.5,1"
    rows = markdown_rows(output("cart_table.py", "margins", "--out",
                                os.path.join(RESULTS, "cart_table"), "--variants", "cart,default",
                                "--margins=" + margins))
    quoted = readme_table("**The choice's margin, the current default's cells**")
    columns = ("below CART - 0.5", "mean - CART (pp)")
    expected = {(z, "75"): dict(zip(columns, quoted[(z, "75")][2:4])) for z in margins.split(",")
                if (z, "75") in quoted}
    wrong = [] if len(expected) == 5 else ["choice_margins: %d rows quoted" % len(expected)]
    return wrong + check("choice_margins", rows, expected)


def start_basins():
    """The basins of the default's random starts (benches/README "Deduplicating starts would
    not bring pima D=2 under 3"): the two cells above the cost bound, and the summary line,
    as quoted."""
    text = output("cart_table.py", "basins", "--out", os.path.join(RESULTS, "cart_table"),
                  "--variants", "default/polished")
    column = ("distinct end points of the random starts", "iterations repeating a basin")
    wrong = check("start_basins", markdown_rows(text), {
        ("pima D=2", "10"): dict(zip(column, ("18", "0.02"))),
        ("breast_cancer_wisconsin D=1", "10"): dict(zip(column, ("2", "0.34"))),
    })
    summary = "over 78 cells: iterations repeating a basin, median 0.14, largest 0.34 " \
              "(breast_cancer_wisconsin D=1)"
    if summary not in text:
        wrong.append("start_basins: no line %r" % summary)
    return wrong


def against_previous():
    """against_previous.py on the archive (its `default` folder is `whole3m`'s settings):
    every one of the 75 cells as benches/README's table quotes it (all but the seconds and
    their ratio), and its summary lines."""
    text = output("against_previous.py", "--out", os.path.join(RESULTS, "cart_table"))
    regenerated = {(r[0], r[1]): r for r in table_cells(text)[1:]}
    quoted = readme_table("on the cells `whole3m` finished (`against_previous.py`")
    wrong = [] if len(regenerated) == 75 else [
        "against_previous: %d cells regenerated, 75 quoted" % len(regenerated)]
    for key, row in sorted(regenerated.items()):
        if key not in quoted or quoted[key][:7] != row[:7]:
            wrong.append("against_previous %s: %s, benches/README %s"
                         % (key, row[:7], quoted.get(key, [])[:7]))
    readme = open(os.path.join(HERE, "..", "..", "benches", "README.md")).read()
    summaries = [line for line in text.splitlines()
                 if line.startswith(("below CART - 0.5 on these cells:", "mean - CART (pp):"))]
    if len(summaries) != 2:
        wrong.append("against_previous: %d summary lines, 2 expected" % len(summaries))
    for line in summaries:
        if line not in readme:
            wrong.append("against_previous: benches/README lacks the line %r" % line)
    return wrong


def sorrt_table4():
    wrong = []
    for starts, variants, expected in (
        ("starts5", "default,paper", {
            ("boston_housing", "3"): {"default": "0.8440", "paper": "0.6465", "starts": "5"},
            ("wine_quality_red", "2"): {"default": "0.3624", "paper": "0.3161"},
            ("wine_quality_red", "3"): {"default": "0.3591", "paper": "0.2414"},
        }),
        ("starts20", "default", {
            ("boston_housing", "2"): {"default": "0.8430", "starts": "20"},
            ("boston_housing", "3"): {"default": "0.8440"},
            ("wine_quality_red", "2"): {"default": "0.3624"},
            ("wine_quality_red", "3"): {"default": "0.3591"},
        }),
    ):
        rows = markdown_rows(output("../sorrt/table4.py", "table", "--out",
                                    os.path.join(RESULTS, "sorrt_table4", starts),
                                    "--variants", variants))
        wrong += check("sorrt_table4/" + starts, rows, expected)
    return wrong


def sparse_recovery():
    text = output("sparse_recovery.py", "report", "--out", os.path.join(RESULTS, "sparse_recovery"))
    wrong = []
    for line in ("sorct_refit: exact support with test accuracy >= 0.93 on 7 of 10 seeds",
                 "l0glob: exact support with test accuracy >= 0.93 on 8 of 10 seeds",
                 "oracle: at or above 0.93 on 8 of 10 seeds"):
        if line not in text:
            wrong.append("sparse_recovery: no line %r" % line)
    return wrong


def l0_tables():
    """table2.py's rows (fixed-width: data set, method, the mean over the starts and its
    log2 lambda, the returned tree's accuracy and its log2 lambda; s/solve not checked)."""
    wrong = []
    for depth, grid, expected in L0_ROWS:
        # one reading per folder and grid, of the data sets the expectations name
        datasets = ",".join(sorted({dataset for dataset, _ in expected}))
        text = output("../l0tree/table2.py", "--read",
                      "--out", os.path.join(RESULTS, "l0_tables", "depth%d" % depth),
                      "--grid=" + ",".join(str(r) for r in grid), "--depth", str(depth),
                      "--datasets", datasets)
        rows = {}
        for line in text.splitlines()[1:]:
            c = line.split()
            if len(c) == 9:
                rows[(c[0], c[1])] = {"mean of starts": "%s (%s)" % (c[2], c[5]),
                                      "returned": "%s (%s)" % (c[7], c[8])}
        wrong += check("l0_tables/depth%d" % depth, rows, expected)
    return wrong


# The l0 paper's rows as benches/README quotes them: "mean of starts" and the returned tree's
# ("glassbox") best accuracy over lambda, each with its log2 lambda; the paper's grid of log2
# lambda but for thyroid, run at the paper's best two as the README's table.
PAPER_GRID = range(-8, 6)
L0_ROWS = (
    (1, PAPER_GRID, {
        ("monks1", "L0glob"): {"returned": "0.806 (0)", "mean of starts": "0.751 (0)"},
        ("monks1", "Linf"): {"returned": "0.814 (1)", "mean of starts": "0.803 (0)"},
        ("monks2", "L0glob"): {"returned": "0.722 (-8)", "mean of starts": "0.621 (4)"},
        ("monks2", "Linf"): {"returned": "0.747 (2)", "mean of starts": "0.671 (2)"},
        ("monks3", "L0glob"): {"returned": "0.935 (0)", "mean of starts": "0.922 (-1)"},
        ("monks3", "Linf"): {"returned": "0.935 (1)", "mean of starts": "0.928 (3)"},
        ("ionosphere", "L0glob"): {"returned": "0.880 (1)", "mean of starts": "0.875 (2)"},
        ("ionosphere", "Linf"): {"returned": "0.886 (3)", "mean of starts": "0.872 (3)"},
        ("breast_cancer_wisconsin", "L0glob"): {"returned": "0.972 (-3)",
                                                "mean of starts": "0.972 (-3)"},
        ("breast_cancer_wisconsin", "Linf"): {"returned": "0.974 (-5)",
                                              "mean of starts": "0.974 (-2)"},
        ("german_credit", "L0glob"): {"returned": "0.748 (-3)", "mean of starts": "0.740 (-3)"},
        ("german_credit", "Linf"): {"returned": "0.744 (-2)", "mean of starts": "0.718 (0)"},
        ("pima", "L0glob"): {"returned": "0.776 (-1)", "mean of starts": "0.766 (-1)"},
        ("pima", "Linf"): {"returned": "0.767 (-7)", "mean of starts": "0.763 (0)"},
        ("sonar", "L0glob"): {"returned": "0.755 (-3)", "mean of starts": "0.770 (-3)"},
        ("sonar", "Linf"): {"returned": "0.784 (-3)", "mean of starts": "0.729 (-3)"},
        ("spambase", "L0glob"): {"returned": "0.933 (2)", "mean of starts": "0.931 (0)"},
        ("spambase", "Linf"): {"returned": "0.933 (-2)", "mean of starts": "0.807 (-6)"},
    }),
    (2, PAPER_GRID, {
        ("iris", "L0glob"): {"returned": "0.973 (-6)", "mean of starts": "0.954 (-8)"},
        ("iris", "Linf"): {"returned": "0.967 (-3)", "mean of starts": "0.893 (-5)"},
        ("wine", "L0glob"): {"returned": "0.989 (-4)", "mean of starts": "0.955 (-3)"},
        ("wine", "Linf"): {"returned": "0.983 (0)", "mean of starts": "0.854 (2)"},
        ("car", "L0glob"): {"returned": "0.953 (-3)", "mean of starts": "0.900 (1)"},
        ("car", "Linf"): {"returned": "0.953 (-4)", "mean of starts": "0.899 (3)"},
    }),
    (2, (0, 1), {
        ("thyroid", "L0glob"): {"returned": "0.982 (1)", "mean of starts": "0.963 (1)"},
        ("thyroid", "Linf"): {"returned": "0.979 (0)", "mean of starts": "0.943 (1)"},
    }),
)


def main():
    wrong = (cart_table() + paper_rows() + paper_setting() + choice_margins() + start_basins()
             + against_previous()
             + sorrt_table4() + sparse_recovery() + l0_tables())
    for w in wrong:
        print(w, file=sys.stderr)
    if wrong:
        sys.exit("check_results.py: %d mismatches" % len(wrong))
    print("check_results.py: every checked row as quoted")


if __name__ == "__main__":
    main()
