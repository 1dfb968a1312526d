; picaemu test shader (written for the test suite): a point-sprite vertex shader that forwards
; a centre, a colour and a 4x3 size matrix to the geometry shader through dummy outputs
.fvec proj[4], view[4]
.constf k(0.0, 1.0, 2.0, 0.25)
.alias zero k.x
.alias one k.y

.out outCentre dummy
.out outTint dummy
.out outAxisX dummy
.out outAxisY dummy

.in inPos v0
.in inSize v1
.in inTint v2

.entry vmain
.proc vmain
	mov r0, inPos
	mov r0.w, one
	dp4 r1.x, view[0], r0
	dp4 r1.y, view[1], r0
	dp4 r1.z, view[2], r0
	dp4 r1.w, view[3], r0
	dp4 outCentre.x, proj[0], r1
	dp4 outCentre.y, proj[1], r1
	dp4 outCentre.z, proj[2], r1
	dp4 outCentre.w, proj[3], r1
	mov outTint, inTint
	mul r2.x, view[0].x, inSize.x
	mul r2.y, view[1].y, inSize.y
	mul r2.zw, view[2].z, inSize.z
	dp3 outAxisX.x, proj[0], r2
	dp3 outAxisX.y, proj[1], r2
	mov outAxisX.zw, zero
	dp3 outAxisY.x, proj[0], r2.yxzw
	dp3 outAxisY.y, proj[1], r2.yxzw
	mov outAxisY.zw, zero
	end
.end
