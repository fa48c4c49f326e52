package dev.staunch.bench.jmh_generated;
public class GetSelectClose_NativeState_jmhType extends GetSelectClose_NativeState_jmhType_B3 {
}

