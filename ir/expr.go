package ir

// Expr is a scalar expression. Every node knows its type; builders in
// package tl check operand types when they construct nodes.
type Expr interface {
	Type() DType
	isExpr()
}

// Const is a literal. Integer and bool constants use I, floats use F.
type Const struct {
	T DType
	I int64
	F float64
}

// VarKind says where a variable's value comes from.
type VarKind uint8

const (
	LoopVar  VarKind = iota // bound by For, Parallel
	BlockIdx                // the block's coordinate along one grid axis
	SymSize                 // a named size bound when the kernel is launched
	// SMCount is the number of multiprocessors of the GPU the kernel runs
	// on, bound at launch from the device (Func.SMs; the interpreter
	// binds InterpSMs): for persistent grids and for hints such as which
	// tile a block one wave later reads.
	SMCount
)

// Var is a named integer value: a loop index, a block index, a symbolic
// size or the SM count. Vars are compared by pointer.
type Var struct {
	Name string
	Kind VarKind
	Axis int // BlockIdx: 0, 1, 2 for x, y, z
	Pos  Pos // SymSize: where the program declared it (tl.Sym)
}

// BinOp is a binary operator.
type BinOp uint8

const (
	Add BinOp = iota
	Sub
	Mul
	Div // integer division truncates toward zero, as in C
	Mod
	Min
	Max
	Lt
	Le
	Gt
	Ge
	Eq
	Ne
	And
	Or
	Pow // x^y in f32, whatever the operands' types
)

var binOpNames = [...]string{"+", "-", "*", "/", "%", "min", "max", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "pow"}

func (o BinOp) String() string { return binOpNames[o] }

// IsCompare reports whether o yields a Bool from numeric operands.
func (o BinOp) IsCompare() bool { return o >= Lt && o <= Ne }

// IsLogic reports whether o combines two Bools.
func (o BinOp) IsLogic() bool { return o == And || o == Or }

// Binary applies Op to X and Y; T is the result type.
type Binary struct {
	Op   BinOp
	X, Y Expr
	T    DType
}

// UnOp is a unary operator or math function.
type UnOp uint8

const (
	Neg UnOp = iota
	Not
	Exp
	Exp2
	Log
	Log2
	Sqrt
	Rsqrt
	Abs
	Tanh
	Sigmoid // 1 / (1 + e^-x)
	Erf
	Log1p // ln(1 + x), exact near 0
	Expm1 // e^x - 1, exact near 0
	Sin
	Cos
)

var unOpNames = [...]string{"neg", "not", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "tanh", "sigmoid", "erf", "log1p", "expm1", "sin", "cos"}

func (o UnOp) String() string { return unOpNames[o] }

// Unary applies Op to X.
type Unary struct {
	Op UnOp
	X  Expr
	T  DType
}

// Cast converts X to T, rounding to nearest even for narrower floats.
type Cast struct {
	X Expr
	T DType
}

// Select is Cond ? X : Y.
type Select struct {
	Cond, X, Y Expr
	T          DType
}

// Load reads one element of a buffer.
type Load struct {
	Buf *Buffer
	Idx []Expr
}

func (c *Const) Type() DType  { return c.T }
func (v *Var) Type() DType    { return I32 }
func (b *Binary) Type() DType { return b.T }
func (u *Unary) Type() DType  { return u.T }
func (c *Cast) Type() DType   { return c.T }
func (s *Select) Type() DType { return s.T }
func (l *Load) Type() DType   { return l.Buf.DType.Compute() }

func (*Const) isExpr()  {}
func (*Var) isExpr()    {}
func (*Binary) isExpr() {}
func (*Unary) isExpr()  {}
func (*Cast) isExpr()   {}
func (*Select) isExpr() {}
func (*Load) isExpr()   {}

// IntConst returns an I32 constant.
func IntConst(v int64) *Const { return &Const{T: I32, I: v} }

// ConstInt returns the value of e when it is an integer constant.
func ConstInt(e Expr) (int64, bool) {
	if c, ok := e.(*Const); ok && c.T.IsInt() {
		return c.I, true
	}
	return 0, false
}

// WalkExpr calls fn on e and every sub-expression, parents first.
func WalkExpr(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch e := e.(type) {
	case *Binary:
		WalkExpr(e.X, fn)
		WalkExpr(e.Y, fn)
	case *Unary:
		WalkExpr(e.X, fn)
	case *Cast:
		WalkExpr(e.X, fn)
	case *Select:
		WalkExpr(e.Cond, fn)
		WalkExpr(e.X, fn)
		WalkExpr(e.Y, fn)
	case *Load:
		for _, i := range e.Idx {
			WalkExpr(i, fn)
		}
	}
}
