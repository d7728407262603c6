import eoslab
import eoslab.cluster
import eoslab.grading
import eoslab.inspect
import eoslab.protocol


def test_all_is_sorted_and_complete():
    for mod in (eoslab, eoslab.cluster, eoslab.grading, eoslab.inspect, eoslab.protocol):
        assert list(mod.__all__) == sorted(mod.__all__), mod.__name__
        for name in mod.__all__:
            assert hasattr(mod, name), f"{mod.__name__}.{name}"
