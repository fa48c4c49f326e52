package dev.staunch.bench.jmh_generated;
public class GetSelectClose_jmhType extends GetSelectClose_jmhType_B3 {
}

