"""List the config values that restate a default stated elsewhere (the schema, an estimator's
or data-set builder's signature, or a file the config is composed on), each with the reason it
is kept when rankrepro.pipeline.redundancy.KEEP gives one.  Exit status 1 when any is not
justified (tests/test_config_redundancy.py asserts there is none).

    PYTHONPATH=src python scripts/config_redundancy.py [config_dir]
"""
import sys

from rankrepro.pipeline.redundancy import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
