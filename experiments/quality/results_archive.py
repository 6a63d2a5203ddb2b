"""The results files the quality tables are regenerated from, kept in the repository
gzipped (`experiments/quality/results/`): reading a file or its `.gz` archive, and writing
an archive that is the same bytes twice (no timestamp), so a rerun that changes nothing
changes no file."""
import gzip, json, os


def read_text(path):
    """The text of `path`, or of its archived `path.gz`, or None where neither exists."""
    if os.path.exists(path):
        return open(path).read()
    if os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt") as f:
            return f.read()
    return None


def json_lines(text):
    """The records of a results file's text, one JSON object a line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_config_gz(to, text):
    """A run's config as `to/config.toml.gz`: gzipped, because it is a record of the run and
    not a config to run (tests/shipped_configs.rs checks every .toml under experiments/ as a
    replication config)."""
    write_gz(os.path.join(to, "config.toml.gz"), text)


def write_gz(path, text):
    """`text` into `path` gzipped, with no timestamp; written whole or not at all."""
    with open(path + ".part", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text.encode())
    os.replace(path + ".part", path)
