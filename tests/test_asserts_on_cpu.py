from codea1.judge.asserts import split_assert


def test_split_simple():
    assert split_assert("assert add(1, 2) == 3") == ("add(1, 2)", "==", "3")


def test_split_drops_message_and_normalises():
    assert split_assert("assert  f( [1,2] )==[2, 1] , 'msg'") == ("f([1, 2])", "==", "[2, 1]")


def test_split_other_ops():
    assert split_assert("assert f(0) is None") == ("f(0)", "is", "None")
    assert split_assert("assert f(0) != 1") == ("f(0)", "!=", "1")


def test_split_rejects():
    for bad in [
        "assert f(1)",
        "assert 1 < f(1)",
        "assert a == b == c",
        "x = 1",
        "assert f(",
        "",
        "assert f(1) == 1\nassert f(2) == 2",
    ]:
        assert split_assert(bad) is None, bad
