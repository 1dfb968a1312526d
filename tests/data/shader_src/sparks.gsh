; picaemu test shader (written for the test suite): a geometry shader that turns each point into
; N jittered quads; exercises labels (forward and backward jmpc), ifu/.else, setemit flags, emit,
; mad with a negated source and array uniforms read through partial swizzles
.gsh particle c20 c0 4

.fvec counts, lcg, seed, corners[2]
.bool jitter, fade

.constf kk(0.0, 1.0, 0.5, 2.0)
.alias zeros kk.x
.alias ones kk.y

.out oPos position
.out oCol color
.out oUv texcoord0

.alias centre c0
.alias tint c1
.alias axisx c2
.alias axisy c3

.entry gmain
.proc gmain
	mov r14, seed
	mov r15.w, counts.x
again:
	add r15.w, -ones, r15
roll:
	mov r2, lcg.y
	mad r2, r14, lcg.x, r2
	mul r3, lcg.w, r2
	flr r3, r3
	mad r14, -r3, lcg.z, r2
	mul r2, lcg.w, r14
	max r2, zeros, r2
	min r2, ones, r2
	ifu jitter
		dp3 r3, r2, r2
		cmp ones, ge, ge, r3
	.else
		cmp r2, eq, eq, r2
	.end
	jmpc !cmp.x, roll
	ifu fade
		cmp kk.xy, gt, lt, r15.w
	.else
		flr r15.z, r15.w
		cmp r15, ne, ne, r15
	.end
	jmpc cmp.x || cmp.y, skip
	dp3 r10.x, axisx, r2
	dp3 r10.y, axisy, r2
	mov r10.zw, zeros
	mov r1, r10
	mov r1.x, -r1
	setemit 0
	add oPos, centre, -r10.xyz
	mov oCol, tint.w
	mov oUv, corners[0].xy
	emit
	setemit 1
	add oPos, centre, -r1.xyz
	mov oCol, tint.w
	mov oUv, corners[0].zw
	emit
	setemit 2, prim
	add oPos, centre, r1.xyz
	mov oCol, tint.w
	mov oUv, corners[1].xy
	emit
	setemit 0, inv prim
	add oPos, centre, r10.xyz
	mov oCol, tint.w
	mov oUv, corners[1].zw
	emit
skip:
	cmp zeros, lt, lt, r15.w
	jmpc cmp.x, again
	end
.end
