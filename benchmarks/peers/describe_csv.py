"""The peer of benchmarks/tabular_stats.sh: what `kiln data stats` computes of a numeric CSV file,
as a pandas user computes it: pandas.read_csv (its C parser) and DataFrame.describe (count, mean,
std, min, quartiles, max of every column), plus the population standard deviation kiln's
z-scores use. Prints one JSON line with the rows and the seconds from start to finish of the
work (the import of pandas excluded: `seconds_with_import` has it).
"""
import sys
import time

started = time.perf_counter()
import pandas  # noqa: E402

imported = time.perf_counter()
frame = pandas.read_csv(sys.argv[1])
summary = frame.describe()
deviations = frame.std(ddof=0)
done = time.perf_counter()
print('{"rows": %d, "seconds": %.4f, "seconds_with_import": %.4f, "mean_x0": %.6f}'
      % (len(frame), done - imported, done - started, summary.loc["mean"].iloc[0]))
