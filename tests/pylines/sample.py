"""sample.py - code whose line tables the pylines fixtures hold (gen-fixture.py
compiles it, never runs it). The shapes stress both table formats: line jumps
past 127 and back, more than 255 bytes of bytecode on one line, columns past
127, statements over several lines, instructions without a line (cleanup of
with and try), nested, inlined and generated scopes."""
import contextlib


def leaf(x):
    return x + 1


def long_gap(a):
    text = """
    filler line 1 of a string that moves the next statement far down
    filler line 2 of a string that moves the next statement far down
    filler line 3 of a string that moves the next statement far down
    filler line 4 of a string that moves the next statement far down
    filler line 5 of a string that moves the next statement far down
    filler line 6 of a string that moves the next statement far down
    filler line 7 of a string that moves the next statement far down
    filler line 8 of a string that moves the next statement far down
    filler line 9 of a string that moves the next statement far down
    filler line 10 of a string that moves the next statement far down
    filler line 11 of a string that moves the next statement far down
    filler line 12 of a string that moves the next statement far down
    filler line 13 of a string that moves the next statement far down
    filler line 14 of a string that moves the next statement far down
    filler line 15 of a string that moves the next statement far down
    filler line 16 of a string that moves the next statement far down
    filler line 17 of a string that moves the next statement far down
    filler line 18 of a string that moves the next statement far down
    filler line 19 of a string that moves the next statement far down
    filler line 20 of a string that moves the next statement far down
    filler line 21 of a string that moves the next statement far down
    filler line 22 of a string that moves the next statement far down
    filler line 23 of a string that moves the next statement far down
    filler line 24 of a string that moves the next statement far down
    filler line 25 of a string that moves the next statement far down
    filler line 26 of a string that moves the next statement far down
    filler line 27 of a string that moves the next statement far down
    filler line 28 of a string that moves the next statement far down
    filler line 29 of a string that moves the next statement far down
    filler line 30 of a string that moves the next statement far down
    filler line 31 of a string that moves the next statement far down
    filler line 32 of a string that moves the next statement far down
    filler line 33 of a string that moves the next statement far down
    filler line 34 of a string that moves the next statement far down
    filler line 35 of a string that moves the next statement far down
    filler line 36 of a string that moves the next statement far down
    filler line 37 of a string that moves the next statement far down
    filler line 38 of a string that moves the next statement far down
    filler line 39 of a string that moves the next statement far down
    filler line 40 of a string that moves the next statement far down
    filler line 41 of a string that moves the next statement far down
    filler line 42 of a string that moves the next statement far down
    filler line 43 of a string that moves the next statement far down
    filler line 44 of a string that moves the next statement far down
    filler line 45 of a string that moves the next statement far down
    filler line 46 of a string that moves the next statement far down
    filler line 47 of a string that moves the next statement far down
    filler line 48 of a string that moves the next statement far down
    filler line 49 of a string that moves the next statement far down
    filler line 50 of a string that moves the next statement far down
    filler line 51 of a string that moves the next statement far down
    filler line 52 of a string that moves the next statement far down
    filler line 53 of a string that moves the next statement far down
    filler line 54 of a string that moves the next statement far down
    filler line 55 of a string that moves the next statement far down
    filler line 56 of a string that moves the next statement far down
    filler line 57 of a string that moves the next statement far down
    filler line 58 of a string that moves the next statement far down
    filler line 59 of a string that moves the next statement far down
    filler line 60 of a string that moves the next statement far down
    filler line 61 of a string that moves the next statement far down
    filler line 62 of a string that moves the next statement far down
    filler line 63 of a string that moves the next statement far down
    filler line 64 of a string that moves the next statement far down
    filler line 65 of a string that moves the next statement far down
    filler line 66 of a string that moves the next statement far down
    filler line 67 of a string that moves the next statement far down
    filler line 68 of a string that moves the next statement far down
    filler line 69 of a string that moves the next statement far down
    filler line 70 of a string that moves the next statement far down
    filler line 71 of a string that moves the next statement far down
    filler line 72 of a string that moves the next statement far down
    filler line 73 of a string that moves the next statement far down
    filler line 74 of a string that moves the next statement far down
    filler line 75 of a string that moves the next statement far down
    filler line 76 of a string that moves the next statement far down
    filler line 77 of a string that moves the next statement far down
    filler line 78 of a string that moves the next statement far down
    filler line 79 of a string that moves the next statement far down
    filler line 80 of a string that moves the next statement far down
    filler line 81 of a string that moves the next statement far down
    filler line 82 of a string that moves the next statement far down
    filler line 83 of a string that moves the next statement far down
    filler line 84 of a string that moves the next statement far down
    filler line 85 of a string that moves the next statement far down
    filler line 86 of a string that moves the next statement far down
    filler line 87 of a string that moves the next statement far down
    filler line 88 of a string that moves the next statement far down
    filler line 89 of a string that moves the next statement far down
    filler line 90 of a string that moves the next statement far down
    filler line 91 of a string that moves the next statement far down
    filler line 92 of a string that moves the next statement far down
    filler line 93 of a string that moves the next statement far down
    filler line 94 of a string that moves the next statement far down
    filler line 95 of a string that moves the next statement far down
    filler line 96 of a string that moves the next statement far down
    filler line 97 of a string that moves the next statement far down
    filler line 98 of a string that moves the next statement far down
    filler line 99 of a string that moves the next statement far down
    filler line 100 of a string that moves the next statement far down
    filler line 101 of a string that moves the next statement far down
    filler line 102 of a string that moves the next statement far down
    filler line 103 of a string that moves the next statement far down
    filler line 104 of a string that moves the next statement far down
    filler line 105 of a string that moves the next statement far down
    filler line 106 of a string that moves the next statement far down
    filler line 107 of a string that moves the next statement far down
    filler line 108 of a string that moves the next statement far down
    filler line 109 of a string that moves the next statement far down
    filler line 110 of a string that moves the next statement far down
    filler line 111 of a string that moves the next statement far down
    filler line 112 of a string that moves the next statement far down
    filler line 113 of a string that moves the next statement far down
    filler line 114 of a string that moves the next statement far down
    filler line 115 of a string that moves the next statement far down
    filler line 116 of a string that moves the next statement far down
    filler line 117 of a string that moves the next statement far down
    filler line 118 of a string that moves the next statement far down
    filler line 119 of a string that moves the next statement far down
    filler line 120 of a string that moves the next statement far down
    filler line 121 of a string that moves the next statement far down
    filler line 122 of a string that moves the next statement far down
    filler line 123 of a string that moves the next statement far down
    filler line 124 of a string that moves the next statement far down
    filler line 125 of a string that moves the next statement far down
    filler line 126 of a string that moves the next statement far down
    filler line 127 of a string that moves the next statement far down
    filler line 128 of a string that moves the next statement far down
    filler line 129 of a string that moves the next statement far down
    filler line 130 of a string that moves the next statement far down
    filler line 131 of a string that moves the next statement far down
    filler line 132 of a string that moves the next statement far down
    filler line 133 of a string that moves the next statement far down
    filler line 134 of a string that moves the next statement far down
    filler line 135 of a string that moves the next statement far down
    filler line 136 of a string that moves the next statement far down
    filler line 137 of a string that moves the next statement far down
    filler line 138 of a string that moves the next statement far down
    filler line 139 of a string that moves the next statement far down
    filler line 140 of a string that moves the next statement far down
    filler line 141 of a string that moves the next statement far down
    filler line 142 of a string that moves the next statement far down
    filler line 143 of a string that moves the next statement far down
    filler line 144 of a string that moves the next statement far down
    filler line 145 of a string that moves the next statement far down
    filler line 146 of a string that moves the next statement far down
    filler line 147 of a string that moves the next statement far down
    filler line 148 of a string that moves the next statement far down
    filler line 149 of a string that moves the next statement far down
    filler line 150 of a string that moves the next statement far down
    filler line 151 of a string that moves the next statement far down
    filler line 152 of a string that moves the next statement far down
    filler line 153 of a string that moves the next statement far down
    filler line 154 of a string that moves the next statement far down
    filler line 155 of a string that moves the next statement far down
    filler line 156 of a string that moves the next statement far down
    filler line 157 of a string that moves the next statement far down
    filler line 158 of a string that moves the next statement far down
    filler line 159 of a string that moves the next statement far down
    filler line 160 of a string that moves the next statement far down
    filler line 161 of a string that moves the next statement far down
    filler line 162 of a string that moves the next statement far down
    filler line 163 of a string that moves the next statement far down
    filler line 164 of a string that moves the next statement far down
    filler line 165 of a string that moves the next statement far down
    filler line 166 of a string that moves the next statement far down
    filler line 167 of a string that moves the next statement far down
    filler line 168 of a string that moves the next statement far down
    filler line 169 of a string that moves the next statement far down
    filler line 170 of a string that moves the next statement far down
    filler line 171 of a string that moves the next statement far down
    filler line 172 of a string that moves the next statement far down
    filler line 173 of a string that moves the next statement far down
    filler line 174 of a string that moves the next statement far down
    filler line 175 of a string that moves the next statement far down
    filler line 176 of a string that moves the next statement far down
    filler line 177 of a string that moves the next statement far down
    filler line 178 of a string that moves the next statement far down
    filler line 179 of a string that moves the next statement far down
    filler line 180 of a string that moves the next statement far down
    filler line 181 of a string that moves the next statement far down
    filler line 182 of a string that moves the next statement far down
    filler line 183 of a string that moves the next statement far down
    filler line 184 of a string that moves the next statement far down
    filler line 185 of a string that moves the next statement far down
    filler line 186 of a string that moves the next statement far down
    filler line 187 of a string that moves the next statement far down
    filler line 188 of a string that moves the next statement far down
    filler line 189 of a string that moves the next statement far down
    filler line 190 of a string that moves the next statement far down
    filler line 191 of a string that moves the next statement far down
    filler line 192 of a string that moves the next statement far down
    filler line 193 of a string that moves the next statement far down
    filler line 194 of a string that moves the next statement far down
    filler line 195 of a string that moves the next statement far down
    filler line 196 of a string that moves the next statement far down
    filler line 197 of a string that moves the next statement far down
    filler line 198 of a string that moves the next statement far down
    filler line 199 of a string that moves the next statement far down
    filler line 200 of a string that moves the next statement far down
    """
    b = len(text) + a
    return leaf(b)


def back_jump(a, b):
    return leaf(
        a,
        # argument gap 1
        # argument gap 2
        # argument gap 3
        # argument gap 4
        # argument gap 5
        # argument gap 6
        # argument gap 7
        # argument gap 8
        # argument gap 9
        # argument gap 10
        # argument gap 11
        # argument gap 12
        # argument gap 13
        # argument gap 14
        # argument gap 15
        # argument gap 16
        # argument gap 17
        # argument gap 18
        # argument gap 19
        # argument gap 20
        # argument gap 21
        # argument gap 22
        # argument gap 23
        # argument gap 24
        # argument gap 25
        # argument gap 26
        # argument gap 27
        # argument gap 28
        # argument gap 29
        # argument gap 30
        # argument gap 31
        # argument gap 32
        # argument gap 33
        # argument gap 34
        # argument gap 35
        # argument gap 36
        # argument gap 37
        # argument gap 38
        # argument gap 39
        # argument gap 40
        # argument gap 41
        # argument gap 42
        # argument gap 43
        # argument gap 44
        # argument gap 45
        # argument gap 46
        # argument gap 47
        # argument gap 48
        # argument gap 49
        # argument gap 50
        # argument gap 51
        # argument gap 52
        # argument gap 53
        # argument gap 54
        # argument gap 55
        # argument gap 56
        # argument gap 57
        # argument gap 58
        # argument gap 59
        # argument gap 60
        # argument gap 61
        # argument gap 62
        # argument gap 63
        # argument gap 64
        # argument gap 65
        # argument gap 66
        # argument gap 67
        # argument gap 68
        # argument gap 69
        # argument gap 70
        # argument gap 71
        # argument gap 72
        # argument gap 73
        # argument gap 74
        # argument gap 75
        # argument gap 76
        # argument gap 77
        # argument gap 78
        # argument gap 79
        # argument gap 80
        # argument gap 81
        # argument gap 82
        # argument gap 83
        # argument gap 84
        # argument gap 85
        # argument gap 86
        # argument gap 87
        # argument gap 88
        # argument gap 89
        # argument gap 90
        # argument gap 91
        # argument gap 92
        # argument gap 93
        # argument gap 94
        # argument gap 95
        # argument gap 96
        # argument gap 97
        # argument gap 98
        # argument gap 99
        # argument gap 100
        # argument gap 101
        # argument gap 102
        # argument gap 103
        # argument gap 104
        # argument gap 105
        # argument gap 106
        # argument gap 107
        # argument gap 108
        # argument gap 109
        # argument gap 110
        # argument gap 111
        # argument gap 112
        # argument gap 113
        # argument gap 114
        # argument gap 115
        # argument gap 116
        # argument gap 117
        # argument gap 118
        # argument gap 119
        # argument gap 120
        # argument gap 121
        # argument gap 122
        # argument gap 123
        # argument gap 124
        # argument gap 125
        # argument gap 126
        # argument gap 127
        # argument gap 128
        # argument gap 129
        # argument gap 130
        # argument gap 131
        # argument gap 132
        # argument gap 133
        # argument gap 134
        # argument gap 135
        # argument gap 136
        # argument gap 137
        # argument gap 138
        # argument gap 139
        # argument gap 140
        # argument gap 141
        # argument gap 142
        # argument gap 143
        # argument gap 144
        # argument gap 145
        # argument gap 146
        # argument gap 147
        # argument gap 148
        # argument gap 149
        # argument gap 150
        b if False else a,
    ) if False else leaf(a)


def one_long_line(a):
    x = a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a
    return x


def wide(a):
    if a:                                                                                                                                         y = leaf(a) + leaf(a + 1) + leaf(a + 2)
    return y


class Model:
    scale = 3

    def __init__(self, n):
        self.n = n

    def forward(self, x):
        total = 0
        for i in range(self.n):
            total += leaf(
                x * i
                + self.scale
            )
        return total

    @staticmethod
    def helper(v):
        return [leaf(i) for i in range(v) if i % 2]


def guarded(a):
    try:
        v = leaf(a)
    except ValueError as e:
        v = str(e)
    finally:
        a = None
    with contextlib.suppress(KeyError):
        v = leaf(v)
    return v


def gen(n):
    for i in range(n):
        yield leaf(i)
    yield from range(n)


async def coro(n):
    return leaf(n)


def closures(n):
    def inner(k):
        return lambda z: z + k + n
    return inner(2)(3)


def matcher(v):
    match v:
        case [x, y]:
            return x + y
        case {"k": x}:
            return x
        case _:
            return f"""{v}
{leaf(1)}"""


def main():
    m = Model(4)
    r = m.forward(2) + long_gap(1) + back_jump(1, 2) + one_long_line(1)
    r += wide(1) + guarded(1) + sum(gen(3)) + closures(1) + len(Model.helper(5))
    return r, matcher([1, 2])


if __name__ == "__main__":
    main()
